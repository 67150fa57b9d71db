// The mystmd plugin of sphinx-gpu-admonition (written by
// `python -m sphinx_gpu_admonition.mystmd init`; myst.yml names this file).
// init and migrate replace it only while it is this text, or with --force.
//
// mystmd imports this file into its own process. The directives and roles run the
// package's plugin once per call (mystmd wants their answer at once, as its
// executable plugins give it); the transforms go to one Python process kept for the
// build (`--serve`: a line of JSON a request, a line a reply), started at the first.
import { spawn, spawnSync } from "node:child_process";

// what init wrote in: the interpreter, the package's version and its specification
const CONFIG = {};

const ENTRY = "from sphinx_gpu_admonition.mystmd.plugin import main; main()";
const COMMAND = `${CONFIG.python}: sphinx_gpu_admonition.mystmd.plugin`;
const DEBUG = process.argv.includes("--debug") || process.argv.includes("-d");

// a call that failed; `moved`: a process that did not answer (the hint to run init)
function failed(kind, name, why, stderr, moved = true) {
  const hint = moved ? "; if the interpreter or the package moved, run python -m "
    + "sphinx_gpu_admonition.mystmd init again" : "";
  return new Error(`sphinx-gpu-admonition: ${why} (${COMMAND}, ${kind} '${name}')${hint}`
    + `\n\n${stderr ?? ""}`);
}

function debug(text) {
  if (DEBUG && text) process.stderr.write(`\n\n${text}\n\n`);
}

// as mystmd's executable plugins: a process, the data on stdin, the answer on stdout
function runOnce(kind, name, data) {
  const done = spawnSync(CONFIG.python, ["-c", ENTRY, `--${kind}`, name], {
    input: JSON.stringify(data), encoding: "utf-8", stdio: ["pipe", "pipe", "pipe"],
    maxBuffer: 1 << 30,
  });
  if (done.error) throw failed(kind, name, `cannot run: ${done.error.message}`, done.stderr);
  if (done.status !== 0) {
    throw failed(kind, name, `exit status ${done.status ?? done.signal}`, done.stderr);
  }
  debug(done.stderr);
  return JSON.parse(done.stdout);
}

let server = null;

function startServer() {
  const child = spawn(CONFIG.python, ["-c", ENTRY, "--serve"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const state = { child, pending: new Map(), next: 1, out: "", err: "", hello: null,
                  gone: null };
  const fail = state.fail = (why) => {
    state.gone ??= why; // the later transforms fail with the same reason
    for (const { reject, kind, name } of state.pending.values()) {
      reject(failed(kind, name, why, state.err.slice(-20000)));
    }
    state.pending.clear();
    hold(state); // nothing waits on it now: node ends, even if a stuck server does not
  };
  child.on("error", (error) => fail(`cannot run the plugin's server: ${error.message}`));
  child.on("close", (code, signal) => fail( // exited, its last reply read
    `the plugin's server ended (${signal ? `signal ${signal}` : `exit status ${code}`})`));
  child.stdin.on("error", () => {}); // a server that is gone: "close" says so
  child.stderr.setEncoding("utf-8");
  child.stderr.on("data", (chunk) => {
    state.err = (state.err + chunk).slice(-100000);
    debug(chunk);
  });
  child.stdout.setEncoding("utf-8");
  child.stdout.on("data", (chunk) => {
    let start = 0;
    let end;
    while ((end = chunk.indexOf("\n", start)) >= 0) { // a reply a line; a page's is long
      const line = state.out + chunk.slice(start, end);
      state.out = "";
      start = end + 1;
      if (!answered(state, line)) return;
    }
    state.out += chunk.slice(start);
  });
  server = state;
  hold(state);
  return state;
}

// one line from the server: its hello, or a reply; false when it is not JSON
function answered(state, line) {
  let reply;
  try {
    reply = JSON.parse(line);
  } catch {
    state.child.kill();
    state.fail(`the plugin's server answered what is not JSON: ${line.slice(0, 200)}`);
    return false;
  }
  if (state.hello === null) {
    state.hello = reply;
    if (reply.version !== CONFIG.version || reply.spec !== CONFIG.specDigest) {
      process.stderr.write(
        `⚠️  sphinx-gpu-admonition: this gpu_admonition.mjs was written for version `
        + `${CONFIG.version}, the interpreter has ${reply.version}`
        + `${reply.spec !== CONFIG.specDigest ? " with other directives or roles" : ""}:`
        + " run python -m sphinx_gpu_admonition.mystmd init again\n");
    }
    return true;
  }
  const waiting = state.pending.get(reply.id);
  if (waiting) {
    state.pending.delete(reply.id);
    hold(state);
    waiting.resolve(reply);
  }
  return true;
}

// node ends at the end of the build: the server and its pipes keep it alive only while a
// request waits for its reply (the server ends when its stdin closes, with node)
function hold(state) {
  const busy = state.pending.size > 0;
  for (const handle of [state.child, state.child.stdin, state.child.stdout,
                        state.child.stderr]) {
    if (busy) handle.ref?.(); else handle.unref?.();
  }
}

function request(kind, name, data) {
  const state = server ?? startServer();
  if (state.gone) {
    return Promise.reject(failed(kind, name, state.gone, state.err.slice(-20000)));
  }
  const id = state.next++;
  return new Promise((resolve, reject) => {
    state.pending.set(id, { resolve, reject, kind, name });
    hold(state);
    state.child.stdin.write(`${JSON.stringify({ id, kind, name, data })}\n`);
  });
}

async function runTransform(name, tree) {
  const reply = await request("transform", name, tree);
  if (reply.error !== undefined) {
    // as the executable plugin's non-zero exit: a --strict build's warnings fail it
    throw failed("transform", name, reply.strict ? "warnings in a --strict build"
      : reply.error, reply.stderr, false);
  }
  debug(reply.stderr);
  Object.assign(tree, reply.result);
}

const spec = CONFIG.spec;
const plugin = {
  ...spec,
  directives: (spec.directives ?? []).map((directive) => ({
    ...directive, run: (data) => runOnce("directive", directive.name, data),
  })),
  roles: (spec.roles ?? []).map((role) => ({
    ...role, run: (data) => runOnce("role", role.name, data),
  })),
  transforms: (spec.transforms ?? []).map((transform) => ({
    ...transform, plugin: () => (tree) => runTransform(transform.name, tree),
  })),
};

export default plugin;
