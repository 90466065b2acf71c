"""`mmedbench leaderboard`: one release's systems side by side, from evaluation folders."""
