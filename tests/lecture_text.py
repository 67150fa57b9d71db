"""A lecture shaped like QuantEcon's numpy_vs_numba_vs_jax (MyST Markdown), its code
cells as an engine passes them, and records of a CPU build and a GPU build of it.

The prose quotes short sentences of the real lecture (lecture-python-programming,
``lectures/numpy_vs_numba_vs_jax.md``) and the four statements of issue 31; the
timings are the issue's (a Tesla T4 runner) and a CPU's.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from sphinx_gpu_admonition.model.record import CellRecord, Environment, NotebookRecord
from sphinx_gpu_admonition.model.timings import page_timings

LECTURE = """\
---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
---

(np_vs_numba_vs_jax)=
# NumPy vs Numba vs JAX

In the preceding lectures, we've discussed three core libraries.

```{code-cell} ipython3
import quantecon as qe
import numpy as np
```

## Vectorized operations

### NumPy vectorization

If we switch to NumPy-style vectorization we can use a much larger grid and the
code executes relatively quickly.

```{code-cell} ipython3
:tags: [time:numpy]
with qe.Timer(precision=8):
    z_max_numpy = np.max(f(x, y))
```

In the vectorized version, all the looping takes place in compiled code.

### Vectorized code with JAX

On the surface, vectorized code in JAX is similar to NumPy code.

```{code-cell} ipython3
:tags: [time:mesh-first]
with qe.Timer(precision=8):
    z_max = jnp.max(f(x_mesh, y_mesh)).block_until_ready()
```

Let's run again to eliminate compile time.

```{code-cell} ipython3
:tags: [time:mesh]
with qe.Timer(precision=8):
    z_max = jnp.max(f(x_mesh, y_mesh)).block_until_ready()
```

JAX meshgrid is significantly faster than NumPy. {timing-claim}`mesh << numpy`

Once compiled, JAX is significantly faster than NumPy due to GPU acceleration.

### JAX plus vmap

```{code-cell} ipython3
with qe.Timer(precision=8):
    z_max = jnp.max(f_vec(grid)).block_until_ready()
```

```{code-cell} ipython3
:tags: [time:vmap-v1]
with qe.Timer(precision=8):
    z_max = jnp.max(f_vec(grid)).block_until_ready()
```

The execution time is similar to the mesh operation.

When run on a GPU, it is usually significantly faster.

```{note}
The timing above excludes compilation, e.g. the first call.
```

### vmap version 2

```{code-cell} ipython3
:tags: [time:vmap-v2]
with qe.Timer(precision=8):
    z_max = compute_max_vmap_v2(grid).block_until_ready()
```

We don't get much speed gain.
{timing-claim}`vmap-v2 ~ vmap-v1`
Version 2 runs in {timing}`vmap-v2`, {timing-ratio}`vmap-v2 / vmap-v1` than version 1.

| Version | Memory |
| --- | --- |
| v1 is faster | high |

$$
\\max_{x, y} f(x, y) \\text{ is faster}
$$

% This comment is faster than anything.

## Sequential operations

```{code-cell} ipython3
:tags: [time:numba]
with qe.Timer(precision=8):
    x = qm(0.1, n)
```

```{code-cell} ipython3
:tags: [time:jax-scan]
with qe.Timer(precision=8):
    x_jax = qm_jax(0.1, n).block_until_ready()
```

Both JAX and Numba deliver strong performance after compilation.
{timing-claim}`jax-scan ~ numba on cpu`

Let's run it again to eliminate compilation overhead:

The Numba version is straightforward and natural to read.
"""

#: seconds each timed cell's qe.Timer printed: a Tesla T4 runner (the issue's) and a CPU
GPU_SECONDS = {"numpy": 0.25, "mesh-first": 0.31, "mesh": 0.019, "unnamed-vmap": 0.2,
               "vmap-v1": 0.0011, "vmap-v2": 0.00046, "numba": 0.069, "jax-scan": 0.065}
CPU_SECONDS = {"numpy": 0.25, "mesh-first": 0.35, "mesh": 0.12, "unnamed-vmap": 0.3,
               "vmap-v1": 0.012, "vmap-v2": 0.011, "numba": 0.07, "jax-scan": 0.066}


class Cell(NamedTuple):
    position: int
    index: int | None
    source: str
    tags: tuple[str, ...]
    line: int | None
    outputs: str


def code_cells(seconds: dict[str, float]) -> list[Cell]:
    """The lecture's code cells as an engine passes them: positions count the Markdown
    between them as cells (as jupytext splits a text notebook)."""
    lines = LECTURE.splitlines()
    cells, position = [], 0
    for number, line in enumerate(lines, 1):
        if not line.startswith("```{code-cell}"):
            continue
        position += 2  # the Markdown cell before it, then this one
        body = []
        for following in lines[number:]:
            if following.startswith("```"):
                break
            body.append(following)
        tags = ()
        if body and body[0].startswith(":tags:"):
            tags = tuple(re.findall(r"[\w:-]+", body[0].split(":tags:", 1)[1]))
            body = body[1:]
        name = next((tag[5:] for tag in tags if tag.startswith("time:")),
                    "unnamed-vmap" if "f_vec" in "".join(body) else None)
        printed = f"{seconds[name]:.8f} seconds elapsed\n" if name else ""
        cells.append(Cell(position, len(cells), "\n".join(body), tags, number, printed))
    return cells


def environment(device: str) -> Environment:
    if device == "cpu":
        return Environment.from_dict({"host": {"cpu": "AMD EPYC 7763", "cores": 4},
                                      "jax": {"backend": "cpu"}})
    return Environment.from_dict({"host": {"cpu": "Intel Xeon"}, "jax": {
        "backend": "gpu", "devices": [{"platform": "gpu", "kind": device}]}})


def lecture_record(device: str) -> NotebookRecord:
    """The lecture's record as a build of ``device`` ("cpu", "Tesla T4") makes it."""
    seconds = CPU_SECONDS if device == "cpu" else GPU_SECONDS
    cells = code_cells(seconds)
    record = NotebookRecord(
        docname="lectures/numpy_vs_numba_vs_jax", status="ok", provenance="executed",
        capture="ok", environment=environment(device), source="lectures/numpy_vs_numba_vs_jax.md",
        cells=[CellRecord(index=cell.index, execution_count=cell.index + 1, seconds=1.0,
                          line=cell.line) for cell in cells])
    record.timings = page_timings(cells, record)
    return record
