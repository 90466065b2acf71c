"""Segmenters the stages share."""
from __future__ import annotations


def new_jieba():
    """A jieba Tokenizer with its dictionary loaded and its logging quiet. Each user keeps its
    own: the grounder adds the vocabulary's words to its instance, and the tokenizer is not
    shared across threads without a lock."""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    tk = jieba.Tokenizer()
    tk.initialize()
    return tk
