"""Prefect flows that compose the stages, the thin @task wrappers, content-addressed cache keys and the pre-flight input checks."""
