"""The Sphinx adapter: config, capture, directives, post-transforms and reports.

The only package that imports Sphinx, docutils and MyST-NB; the package's
``setup()`` wires its modules into a build.
"""
