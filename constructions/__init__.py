"""Explicit weights, task generators and small models (torch). May import ``theory``, never ``verify``."""
