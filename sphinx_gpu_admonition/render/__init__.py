"""Views of a build's records and analysis: HTML, text, Markdown, XML, GitHub output.

They import the core (:mod:`..model`) and Jinja2, never Sphinx or docutils, so any
engine and the command line render the same output.
"""
