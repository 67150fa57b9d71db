#!/usr/bin/env bash
# Record real GPU data for the tests: run on a machine with an NVIDIA GPU.
# Builds the capture test book and a lax.scan page with JAX on the GPU, and
# saves the status JSON and `sphinx-gpu-admonition check --json` output to
# ${OUT:-tests/data}, with the probe's per-cell cost on the GPU (its end-of-cell
# device sync included). Kept short: it must fit in a few minutes of device time.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-tests/data}
python3 -m venv /tmp/gpu-venv
/tmp/gpu-venv/bin/pip install -q -e ".[gpu]" "jax[cuda13]" ipykernel
work=$(mktemp -d)
cp -r tests/roots/capture "$work/src"
cat >"$work/src/scan.md" <<'PAGE'
---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
---
# Sequential scan on the GPU

```{gpu}
```

```{code-cell} ipython3
import jax, jax.numpy as jnp
def step(x, shock):
    x = 0.9 * x + shock
    return x, x
shocks = jax.random.normal(jax.random.PRNGKey(0), (1_000_000,))
_, path = jax.lax.scan(step, 0.0, shocks)
float(path.mean())
```
PAGE
sed -i 's/^prefilled$/prefilled\nscan/' "$work/src/index.md"
/tmp/gpu-venv/bin/sphinx-build -b html "$work/src" "$work/html" -D gpu_expected_backend=gpu || true
cp "$work/html/execution-status.json" "$out/gpu-recorded-status.json"
/tmp/gpu-venv/bin/sphinx-gpu-admonition check --json >"$out/gpu-recorded-check.json" || true
# per-cell probe cost in a real IPython shell, the JAX rows on the GPU
/tmp/gpu-venv/bin/python benchmarks/bench_probe.py --quick --kernel --json "$out/gpu-probe-cost.json" \
    | tee "$out/gpu-probe-cost.txt" || true
echo "saved $out/gpu-recorded-status.json, $out/gpu-recorded-check.json and $out/gpu-probe-cost.*"
