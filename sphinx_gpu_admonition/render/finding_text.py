"""The findings' sentences, written once for every view: each flag's reason and action,
a flagged cell's reason, action, compile/run split and JAX's explanation, a notebook's
time budget and the headline against the baseline.

The model's flags carry facts (:class:`..model.rules.Flag`: a rule and plain data);
:class:`FindingText` turns them into words through the translator it is made with: the
book's catalog for a status page (Sphinx's, or the mystmd plugin's ``language``), the
untranslated English for the logs, JUnit, GitHub, the JSON and the command line
(:data:`ENGLISH`).  The literal arguments of ``translate(...)`` and ``ngettext(...)``
are extracted into the message catalog (``python -m sphinx_gpu_admonition.ext.i18n``).

A new rule adds its name to :class:`..model.rules.Rule`, its facts in
:mod:`..model.analysis`, and here a ``_reason_<rule>`` method (its keys documented
in its docstring) and its action in :meth:`FindingText.rule_action`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ..model.findings import Finding, Headline
from ..model.formatting import format_percent, format_ratio, format_seconds
from ..model.rules import RECOMPILATION_RULES, Flag, Rule, action_rule
from .labels import Labels, NGettext, Translate, english, english_plural


def per_step(seconds: float) -> str:
    """A loop's time per step: ``8.2 µs``, ``3.1 ns`` (a CPU's loop takes a few ns a
    step: not "0.0 µs")."""
    if seconds < 1e-6:
        return f"{seconds * 1e9:.1f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs" if seconds < 1e-5 else f"{seconds * 1e6:.0f} µs"
    return format_seconds(seconds)


def code_spans(text: str) -> list[tuple[str, bool]]:
    """``text`` as its pieces, each with whether it is code: the sentences mark code
    with backticks, as Markdown does (``runs `qm_jax` (defined in cell 2)``), and a
    page shows those pieces as code (untrusted pieces escaped, never markup).  Text
    with an unpaired backtick is one piece of prose, as it is."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        return [(text, False)] if text else []
    return [(part, index % 2 == 1) for index, part in enumerate(parts) if part]


class FindingText(NamedTuple):
    """The findings' sentences through ``translate`` / ``ngettext`` (English without)."""

    translate: Translate = english
    ngettext: NGettext = english_plural

    @classmethod
    def of(cls, labels: Labels) -> FindingText:
        """Through the translator of a page's :class:`~.labels.Labels`."""
        return cls(labels.translate, labels.ngettext)

    # -- one flag ---------------------------------------------------------------------
    def reason(self, flag: Flag) -> str:
        """Why the rule flagged the cell (or the build), in plain words."""
        write = getattr(self, f"_reason_{flag.rule}", None)
        return write(flag.facts) if write is not None else str(flag.rule)

    def rule_action(self, flag: Flag) -> str:
        """What to do about a flag of this rule ("" for a ``slow-ok`` cell)."""
        translate = self.translate
        profile = translate("profile the cell (%prun, jax.profiler) or make its example "
                            "smaller")
        actions = {
            Rule.SEQUENTIAL_LOOP: translate(
                "run the loop on the CPU: jit its function for the CPU "
                "(`jax.jit(f, device=jax.devices(\"cpu\")[0])`) or call it inside "
                "`with jax.default_device(jax.devices(\"cpu\")[0]):`; on the GPU, "
                "`unroll=k` (`lax.scan`, `lax.fori_loop`) runs k steps per iteration, or "
                "restructure the loop (vectorise it, `lax.associative_scan`)"),
            Rule.DISPATCH_LOOP: translate(
                "move the loop into one compiled program (`lax.fori_loop`, `lax.scan`, or "
                "`jax.vmap` where its iterations are independent), or keep it on the CPU: "
                "`jax.jit(f, device=jax.devices(\"cpu\")[0])`"),
            Rule.HOST_SYNC: translate(
                "keep the values on the device: check convergence every k steps "
                "(`if i % k == 0: error = float(...)`) or move the loop into "
                "`lax.while_loop`"),
            Rule.PYTHON_LOOP: translate(
                "before the book moves to a GPU, move the loop into one compiled program "
                "(`lax.fori_loop`, `lax.scan`, `lax.while_loop`), or keep it on the CPU "
                "there"),
            Rule.FLOAT64: translate(
                "compute in float32 on the GPU (leave jax_enable_x64 off, or cast the arrays "
                "that do not need double precision): most GPUs run float64 far slower than "
                "float32 (a Tesla T4 at 1/32 of its float32 speed)"),
            Rule.RECOMPILE: translate(
                "pad the inputs to a fixed shape or mark the changing argument static "
                "(static_argnums), so that the function compiles once"),
            Rule.COMPILE: translate(
                "compile once and reuse: hoist the jit out of loops and functions and call it "
                "with the same shapes; on CI, keep compilations between builds with JAX's "
                "persistent compilation cache (jax_compilation_cache_dir)"),
            Rule.COMPILATION_CACHE: translate(
                "set JAX_COMPILATION_CACHE_DIR (or jax.config.update("
                "\"jax_compilation_cache_dir\", ...)) to a folder in the workspace and keep "
                "that folder between CI runs (actions/cache): later builds then load compiled "
                "programs instead of compiling them again"),
            Rule.REGRESSION: translate(
                "compare the cell with the baseline's: what changed in the code, its data or "
                "the device"),
            Rule.SLOW: profile,
            Rule.SHARE: profile,
            Rule.IMPORTS: translate(
                "imports are paid once per kernel; move heavy imports out of the timed path "
                "or accept it"),
        }
        if flag.rule == Rule.COMPILED_AGAIN:
            return self._again_action(flag.facts)
        return actions.get(flag.rule, "")

    def _again_action(self, facts: dict[str, Any]) -> str:
        """``compiled_again``'s action, for its first function's cause."""
        translate = self.translate
        first = facts["functions"][0]
        cause = first.get("cause")
        if cause == "inputs" and first.get("change") == "dtype":
            return translate(
                "pass its inputs with one dtype (`jnp.asarray(x, jnp.float32)`): JAX "
                "compiles the function again for each new input dtype")
        if cause == "inputs":
            return translate(
                "pad or bucket the sizes to a few fixed shapes, keep one size, or mark the "
                "argument that changes static (`static_argnums`): JAX compiles the function "
                "again for each new input shape")
        if cause == "recreated" and first.get("created_in"):
            return translate(
                "jit the function once at the top level (not inside `{function}` around a "
                "new lambda) and reuse it: a second call with the same shapes then skips "
                "compilation").format(function=first["created_in"])
        if cause == "recreated":
            return translate(
                "jit the function once at the top level (not anew in a loop) and reuse it: "
                "a second call with the same shapes then skips compilation")
        if cause == "same_inputs":
            return translate(
                "call it with the same static arguments (`static_argnums`) as before, or "
                "jit it once and reuse it: JAX compiles again for each new static value and "
                "each new function")
        return translate(
            "call it with inputs of the same shapes and dtypes and the same static "
            "arguments as before, and jit it once (not anew inside a function or loop): "
            "a second call then skips compilation")

    def text(self, flag: Flag) -> str:
        """The reason, and for a hint (or a note with an action) what to do: how the
        one-line views (a badge's tooltip, a warning, a cell's row) show a flag."""
        reason = self.reason(flag)
        action = self.rule_action(flag) if flag.is_hint or flag.is_note else ""
        return f"{reason}{self.translate('; ')}{action}" if action else reason

    # -- the flags of one cell ------------------------------------------------------------
    def action(self, flags: Sequence[Flag]) -> str:
        """A flagged cell's one action: the most specific rule's
        (:func:`..model.rules.action_rule`); for a recompilation in a notebook whose
        kernel did not record JAX's explanations, how to have them recorded."""
        flag = action_rule(list(flags))
        if flag is None:
            return ""
        action = self.rule_action(flag)
        # JAX's reason is worth recording unless the record told the cause already (a
        # `recompile` cell whose `compiled_again` names the new input shape included)
        known = any(other.rule == Rule.COMPILED_AGAIN and other.facts["functions"][0].get(
            "cause") in ("inputs", "recreated") for other in flags)
        if flag.rule in RECOMPILATION_RULES and not flag.facts.get("explained", True) \
                and not known:
            action += self.explain_advice()
        return action

    def explain_advice(self) -> str:
        """Added to a recompilation's action where the kernel did not record JAX's
        explanations (the option is off)."""
        return self.translate("; to record why JAX compiled it again, set "
                              "gpu_explain_recompilations = True (mystmd: "
                              "explain_recompilations: true)")

    def reasons(self, flags: Sequence[Flag]) -> str:
        """Why a cell is flagged, then the causes the data points at (no actions)."""
        ordered = sorted(flags, key=lambda flag: flag.is_hint)
        return self.translate("; ").join(self.reason(flag) for flag in ordered)

    def finding_reason(self, finding: Finding) -> str:
        return self.reasons(finding.flags)

    def finding_action(self, finding: Finding) -> str:
        return self.action(finding.flags)

    def jax_says(self, said: Sequence[dict[str, str]]) -> str:
        """``JAX says for jit(q): seen another function defined on the same line; ...``
        from :func:`..model.compilations.jax_reasons` ("" when JAX said nothing); JAX's
        own words stay as it wrote them."""
        if not said:
            return ""
        translate = self.translate
        parts = [translate("for {function}: {reason}").format(
            function=item["function"], reason=item["reason"]) for item in said]
        return translate("JAX says {reasons}").format(reasons=translate("; ").join(parts))

    def timing(self, finding: Finding) -> str:
        """``compile 4.6 s, run 12.0 s (first call)``: JAX compilation set against the
        rest of the cell's time; ``no compilation, run 12.0 s (warm call)`` for a cell
        that ran compiled code; ``(compiled again)`` for one whose functions an earlier
        cell compiled; "" for a cell that neither compiled nor ran JAX code."""
        translate = self.translate
        run = format_seconds(finding.run_seconds)
        if finding.compile_seconds:
            text = translate("compile {compile}, run {run}").format(
                compile=format_seconds(finding.compile_seconds), run=run)
        elif finding.first_call is False:  # a warm call of code compiled before
            text = translate("no compilation, run {run}").format(run=run)
        else:
            return ""
        if finding.first_call is None:
            return text
        if finding.first_call and finding.compiled_again:
            # Translators: a cell whose functions were compiled in an earlier cell already
            call = translate("{timing} (compiled again)")
        else:
            call = (translate("{timing} (first call)") if finding.first_call
                    else translate("{timing} (warm call)"))
        return call.format(timing=text)

    # -- a notebook, the build -----------------------------------------------------------
    def share(self, share: float) -> str:
        """``69% of the notebook's cell time``"""
        return self.translate("{share} of the notebook's cell time").format(
            share=format_percent(share))

    def budget(self, seconds: float, budget_seconds: float) -> str:
        """``took 80.0 s, budget 60.0 s``: a notebook over its time budget."""
        return self.translate("took {time}, budget {budget}").format(
            time=format_seconds(seconds), budget=format_seconds(budget_seconds))

    def cell(self, number: int) -> str:
        """``cell 3`` (:attr:`..model.record.CellName.label`, translated)."""
        return self.translate("cell {number}").format(number=number)

    def headline(self, summary: Headline) -> str:
        """``This build took 3.59 s against 88.4 s in the baseline (0.04×); ...``"""
        translate, ngettext = self.translate, self.ngettext
        ratio = summary.ratio
        took = translate("this build took {now} against {before} in the baseline").format(
            now=format_seconds(summary.seconds),
            before=format_seconds(summary.baseline_seconds))
        if ratio is not None:
            took += translate(" ({ratio})").format(ratio=format_ratio(ratio, times="×"))
        parts = [took]
        if summary.device_changed:
            parts.append(translate("the device changed: {change}").format(
                change=summary.device_change()))
        if summary.regressed:
            parts.append(ngettext("%d notebook slower beyond the machine's own speed",
                                  "%d notebooks slower beyond the machine's own speed",
                                  summary.regressed) % summary.regressed)
        if summary.new:
            parts.append(ngettext("%d new notebook", "%d new notebooks",
                                  summary.new) % summary.new)
        if summary.gone:
            parts.append(ngettext("%d notebook gone", "%d notebooks gone",
                                  summary.gone) % summary.gone)
        text = translate("; ").join(parts)
        return translate("{sentence}.").format(sentence=text[0].upper() + text[1:])

    # -- each rule's reason from its facts ----------------------------------------------
    def _reason_slow(self, facts: dict[str, Any]) -> str:
        """``seconds``: the cell's time; ``limit``: ``slow_cell_seconds``."""
        return self.translate("took {seconds} (limit {limit})").format(
            seconds=format_seconds(facts["seconds"]), limit=format_seconds(facts["limit"]))

    def _reason_share(self, facts: dict[str, Any]) -> str:
        """``share``: the cell's part of its notebook's cell time (0 to 1)."""
        return self.share(facts["share"])

    def _reason_regression(self, facts: dict[str, Any]) -> str:
        """``ratio``: now against the baseline's cell; ``baseline_seconds``;
        ``machine_factor``: how much slower the machine is; ``relative``: the ratio
        beyond it."""
        translate = self.translate
        text = translate("{ratio} slower than the baseline ({seconds})").format(
            ratio=f"{facts['ratio']:.1f}x", seconds=format_seconds(facts["baseline_seconds"]))
        factor = facts["machine_factor"]
        if abs(factor - 1) >= 0.05:  # the same machine's noise is no factor to state
            text += translate("; {relative} beyond the machine's {factor}").format(
                relative=f"{facts['relative']:.1f}x", factor=f"{factor:.1f}x")
        return text

    def _reason_compile(self, facts: dict[str, Any]) -> str:
        """``compile_seconds``, ``share`` (of the cell's time), ``run_seconds``."""
        return self.translate("JAX compilation took {compile} ({share} of the cell), "
                              "running {run}").format(
            compile=format_seconds(facts["compile_seconds"]),
            share=format_percent(facts["share"]), run=format_seconds(facts["run_seconds"]))

    def _reason_recompile(self, facts: dict[str, Any]) -> str:
        """``functions``: ``[{"name": "jit(f)", "count": 4}]``, the user's, most compiled
        first; ``internal``: how many of JAX's own were recompiled too; ``jax_says``:
        JAX's explanations (:meth:`jax_says`); ``explained``: whether the kernel asked
        JAX for them (the action's advice)."""
        translate = self.translate
        listed = ", ".join(self._recompiled(item) for item in facts["functions"])
        if facts["internal"]:
            listed += translate(", +{count} JAX-internal").format(count=facts["internal"])
        why = self.jax_says(facts["jax_says"]) or translate(
            "new shapes, dtypes or static arguments trigger a new compilation each time")
        return translate("recompiled in this cell: {functions} — {why}").format(
            functions=listed, why=why)

    def _recompiled(self, item: dict[str, Any]) -> str:
        """``jit(f) (3x)``, with the input types of its programs where there are several
        (``jit(f) (3x: f32[10]; f32[100]; f32[1000])``)."""
        translate = self.translate
        inputs = item.get("inputs") or []
        if len(inputs) > 1:
            return translate("{function} ({count}x: {inputs})").format(
                function=item["name"], count=item["count"], inputs="; ".join(inputs))
        return translate("{function} ({count}x)").format(function=item["name"],
                                                          count=item["count"])

    def _reason_compiled_again(self, facts: dict[str, Any]) -> str:
        """``functions``: ``[{"name": "jit(q)", "first_cell": 9, "cause": ...}]`` (the
        number of the cell that compiled it first, and why it compiled again:
        :func:`..model.compiled_again.why_again`'s facts); ``compile_seconds``;
        ``jax_says``; ``explained``."""
        translate = self.translate
        listed = "; ".join(self._again(item) for item in facts["functions"])
        text = translate("compiled again: {functions}, {compile} of compilation").format(
            functions=listed, compile=format_seconds(facts["compile_seconds"]))
        said = self.jax_says(facts["jax_says"])
        return text + translate(" — {jax_says}").format(jax_says=said) if said else text

    def _again(self, item: dict[str, Any]) -> str:
        """One function compiled again, with its cause where the record tells it."""
        translate = self.translate
        cause = item.get("cause")
        if cause == "inputs":
            change = {"shape": translate("a new input shape"),
                      "dtype": translate("a new input dtype")}.get(
                item["change"], translate("new inputs"))
            return translate("{function} for {change}: {now} (before {before}, in "
                             "{cell})").format(
                function=item["name"], change=change, now=", ".join(item["inputs"]),
                before=", ".join(item["before"]), cell=self.cell(item["before_cell"]))
        first = self.cell(item["first_cell"])
        if cause == "recreated" and item.get("created_in"):
            return translate("{function} (first in {cell}), made anew by every call of "
                             "`{maker}`").format(function=item["name"], cell=first,
                                                 maker=item["created_in"])
        if cause == "recreated":
            return translate("{function} (first in {cell}), made anew in a loop").format(
                function=item["name"], cell=first)
        if cause == "same_inputs":
            return translate("{function} (first in {cell}) with the same input types: a "
                             "static argument or the function changed").format(
                function=item["name"], cell=first)
        return translate("{function} (first in {cell})").format(function=item["name"],
                                                               cell=first)

    def _reason_sequential_loop(self, facts: dict[str, Any]) -> str:
        """``runs``: the loops the cell runs through functions (:meth:`_run`);
        ``library``: the loops of library code by compiled function (:meth:`_library`);
        or, for a record of an earlier version, ``loops``: the names its text gave."""
        translate = self.translate
        if "loops" in facts:
            return translate("runs {loops} on the GPU: every iteration launches device "
                             "kernels, so long sequential loops can be far slower than on "
                             "the CPU").format(loops=", ".join(facts["loops"]))
        described = [self._run(run) for run in facts["runs"]]
        if facts["library"]:
            described.append(translate("runs {loop}").format(
                loop="; ".join(self._library(item) for item in facts["library"])))
        return translate("{runs} — on the GPU every iteration launches device kernels, so "
                         "long sequential loops can be far slower than on the "
                         "CPU").format(runs="; ".join(described))

    def _steps(self, steps: int | None) -> str:
        return self.translate(" of {steps} steps").format(steps=f"{steps:,}") if steps else ""

    def _per_step(self, text: str, step_seconds: float | None) -> str:
        if not step_seconds:
            return text
        return self.translate("{loop}: about {time} per step on the GPU").format(
            loop=text, time=per_step(step_seconds))

    def _run(self, run: dict[str, Any]) -> str:
        """``primitive`` (``lax.scan``), ``steps``, ``function`` (None: the cell's own
        code), ``loop_function`` (the function the loop is in, when another), where the
        function is defined (``module``, ``defined_cell``: a cell's number, or
        ``defined_earlier``) and ``step_seconds``."""
        translate = self.translate
        loop = translate("a `{primitive}`{steps}").format(primitive=run["primitive"],
                                                          steps=self._steps(run["steps"]))
        if run["function"] is None:
            return self._per_step(translate("runs {loop}").format(loop=loop),
                                  run["step_seconds"])
        if run["module"] is not None:
            where = translate("defined in {module}.py").format(module=run["module"])
        elif run["defined_cell"] is not None:
            where = translate("defined in {cell}").format(cell=self.cell(run["defined_cell"]))
        elif run["defined_earlier"]:
            where = translate("defined in an earlier cell")
        else:
            where = ""
        through = (translate(", through `{function}`").format(function=run["loop_function"])
                   if run["loop_function"] else "")
        if where:
            text = translate("runs `{function}` ({where}){through}, {loop}").format(
                function=run["function"], where=where, through=through, loop=loop)
        else:
            text = translate("runs `{function}`{through}, {loop}").format(
                function=run["function"], through=through, loop=loop)
        return self._per_step(text, run["step_seconds"])

    def _library(self, item: dict[str, Any]) -> str:
        """``function`` (the compiled function: ``jit(sample)``), ``loops`` (how many),
        ``steps`` (of the loop with the most) and ``step_seconds``."""
        translate = self.translate
        if item["loops"] == 1:
            text = translate("{loops} compiled in `{function}` (library code)").format(
                loops=translate("a while loop") + self._steps(item["steps"]),
                function=item["function"])
        else:
            text = translate("{loops} compiled in `{function}` (library code)").format(
                loops=translate("{count} while loops").format(count=item["loops"]),
                function=item["function"])
            if item["steps"]:
                text += translate(", the longest of {steps} steps").format(
                    steps=f"{item['steps']:,}")
        return self._per_step(text, item["step_seconds"])

    # -- Python loops around JAX --------------------------------------------------------
    def _python_loop(self, loop: dict[str, Any]) -> str:
        """Which loop: ``its `for` loop (line 3)`` (the cell's own), ``the `while` loop
        of `vfi` (defined in cell 4, line 4)`` (a function's: the facts of
        :func:`..model.loop_rules.loop_facts`)."""
        translate = self.translate
        holder = loop["loop_function"] or loop["function"]
        if holder is None:
            return translate("its `{loop}` loop (line {line})").format(loop=loop["loop"],
                                                                      line=loop["line"])
        if loop["module"] is not None:
            where = translate("defined in {module}.py").format(module=loop["module"])
        elif loop["defined_cell"] is not None:
            where = translate("defined in {cell}").format(cell=self.cell(loop["defined_cell"]))
        else:
            where = translate("defined in an earlier cell")
        return translate("the `{loop}` loop of `{function}` ({where}, line {line})").format(
            loop=loop["loop"], function=holder, where=where, line=loop["line"])

    def _dispatches(self, loop: dict[str, Any]) -> str:
        """``its `for` loop (line 3) calls `step` 2,000 times, about 15 µs per call``"""
        translate = self.translate
        what = ", ".join(f"`{name}`" for name in loop["calls"] or loop["operations"])
        count = loop["iterations"]
        if loop["calls"]:
            text = (translate("{loop} calls {functions} {count} times").format(
                        loop=self._python_loop(loop), functions=what, count=f"{count:,}")
                    if count else translate("{loop} calls {functions} on every "
                                            "iteration").format(
                        loop=self._python_loop(loop), functions=what))
        else:
            text = (translate("{loop} runs {operations} one by one, {count} times").format(
                        loop=self._python_loop(loop), operations=what, count=f"{count:,}")
                    if count else translate("{loop} runs {operations} one by one on every "
                                            "iteration").format(
                        loop=self._python_loop(loop), operations=what))
        if loop["iteration_seconds"]:
            each = (translate(", about {time} per call") if len(loop["calls"]) == 1
                    else translate(", about {time} per iteration"))
            text += each.format(time=per_step(loop["iteration_seconds"]))
        return text

    def _syncs(self, loop: dict[str, Any]) -> str:
        """``its `while` loop (line 4), which calls `T`, copies a device value to the
        host on every iteration: `error = float(...)` (line 6)``"""
        translate = self.translate
        where = self._python_loop(loop)
        if loop["calls"]:
            where = translate("{loop}, which calls {functions},").format(
                loop=where, functions=", ".join(f"`{name}`" for name in loop["calls"]))
        syncs = "; ".join(translate("`{code}` (line {line})").format(
            code=sync["code"], line=sync["line"]) for sync in loop["syncs"])
        text = translate("{loop} copies a device value to the host on every iteration: "
                         "{syncs}").format(loop=where, syncs=syncs)
        if loop["iterations"]:
            text += translate(" ({count} iterations)").format(count=f"{loop['iterations']:,}")
        return text

    def _reason_dispatch_loop(self, facts: dict[str, Any]) -> str:
        """``loops``: the hot Python loops that dispatch JAX work
        (:func:`..model.loop_rules.loop_facts`)."""
        return self.translate(
            "{loops} — every call is dispatched from Python and, on a GPU, launches device "
            "kernels of its own: many small calls take far longer than one "
            "program").format(loops="; ".join(self._dispatches(loop)
                                              for loop in facts["loops"]))

    def _reason_host_sync(self, facts: dict[str, Any]) -> str:
        """``loops``: the hot Python loops that sync with the host every iteration."""
        return self.translate(
            "{loops} — each copy waits for the device to finish, so JAX cannot queue the "
            "next steps while Python runs").format(loops="; ".join(self._syncs(loop)
                                                             for loop in facts["loops"]))

    def _reason_python_loop(self, facts: dict[str, Any]) -> str:
        """``dispatch`` and ``sync``: the loops a GPU build would flag
        (``dispatch_loop``, ``host_sync``), on a build that ran on a CPU."""
        parts = [self._syncs(loop) for loop in facts["sync"]]
        parts += [self._dispatches(loop) for loop in facts["dispatch"]]
        return self.translate(
            "a Python loop around JAX: {loops}; this build ran on a CPU, where on a GPU "
            "every call would also launch device kernels and every copy wait for the "
            "device").format(loops="; ".join(parts))

    def _reason_float64(self, facts: dict[str, Any]) -> str:
        """No facts: the notebook enabled ``jax_enable_x64`` and the cell ran JAX code."""
        return self.translate("float64 is enabled (jax_enable_x64) on the GPU")

    def _reason_compilation_cache(self, facts: dict[str, Any]) -> str:
        """``compile_seconds``: the compilation of the notebooks run without a
        persistent cache; ``share``: of the executed cells' time; ``notebooks``."""
        count = facts["notebooks"]
        return self.ngettext(
            "JAX compilation took {compile} ({share} of the executed cells' time) in "
            "{count} notebook run on CI without a persistent compilation cache",
            "JAX compilation took {compile} ({share} of the executed cells' time) in "
            "{count} notebooks run on CI without a persistent compilation cache",
            count).format(compile=format_seconds(facts["compile_seconds"]),
                          share=format_percent(facts["share"]), count=count)

    def _reason_slow_ok(self, facts: dict[str, Any]) -> str:
        """``seconds``; ``tag``: the tag that says so (``slow-ok``)."""
        return self.translate("slow on purpose (tagged {tag}), took {seconds}").format(
            tag=facts["tag"], seconds=format_seconds(facts["seconds"]))

    def _reason_imports(self, facts: dict[str, Any]) -> str:
        """The slow rule's facts (``seconds``, ``limit``): a cell of only imports."""
        return self.translate("only imports: {reason}").format(
            reason=self._reason_slow(facts))


#: the English sentences: logs, warnings, JUnit, GitHub, the JSON and the command line
ENGLISH = FindingText()


# -- the warnings' words, for both engines (English, as every log line); where a
#    warning points (a cell's line, a page) is the engine's own way to warn ----------
def slow_cell_warning(finding: Finding) -> str:
    """``slow cell 3 (12.0 s): slow: took 12.0 s (limit 10.0 s); ...``
    (``gpu_warn_slow_cells``): every flag with its reason (a hint with its action)."""
    flags = "; ".join(f"{flag.rule}: {ENGLISH.text(flag)}" for flag in finding.flags)
    return f"slow {finding.name.label} ({format_seconds(finding.seconds)}): {flags}"


def cell_regression_warning(finding: Finding, flag: Flag) -> str:
    """``cell 3 regressed: 3.0x slower than the baseline (4.00 s)``"""
    return f"{finding.name.label} regressed: {ENGLISH.reason(flag)}"


def notebook_regression_warning(seconds: float, ratio: float, baseline_seconds: float | None
                                ) -> str:
    """``notebook regressed: 12.0 s, 3.0x the baseline (4.00 s)``"""
    return (f"notebook regressed: {format_seconds(seconds)}, {ratio:.1f}x the baseline "
            f"({format_seconds(baseline_seconds)})")


def budget_warning(seconds: float, budget_seconds: float, key: str) -> str:
    """A notebook over its time budget; ``key``: the page's setting that changes it."""
    return (f"notebook over its time budget: {ENGLISH.budget(seconds, budget_seconds)} "
            f"(set {key} in the page's metadata to change it)")
