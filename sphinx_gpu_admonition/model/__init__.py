"""The engine-neutral core: what a build's execution was, and what it means.

Standard library only (a test holds it to that): the record model, its schema and
files, the machine's speed, the analysis, the findings, merging and formatting.
Every engine's adapter (the Sphinx extension in :mod:`..ext`) and the command line
build on it.
"""
