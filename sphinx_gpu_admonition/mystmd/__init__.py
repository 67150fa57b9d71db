"""sphinx-gpu-admonition on mystmd (Jupyter Book 2): no Sphinx here.

- :mod:`.kernel_startup`: the ``PYTHONSTARTUP`` of every kernel ``myst build --execute``
  starts; names the page's capture file and runs the probe.
- :mod:`.capture`: the probe's lines and the page's mdast become one
  :class:`~..model.record.NotebookRecord`; sidecars keep it for cache hits.
- :mod:`.mdast`: the MyST nodes the plugin emits and reads.
- :mod:`.notice`, :mod:`.status`, :mod:`.environment`: the ``gpu`` notice, the
  ``execution-status`` page and the ``execution-environment`` tables.
- :mod:`.build_options`: ``--strict`` and ``--execute-parallel`` of the running build.
- :mod:`.plugin`: the plugin's Python (JSON over stdin/stdout): one call a process,
  or the server ``gpu_admonition.mjs`` keeps for a build's calls.
- ``python -m sphinx_gpu_admonition.mystmd env|init``: the kernel environment to
  export, and the plugin file for ``myst.yml``.
"""
