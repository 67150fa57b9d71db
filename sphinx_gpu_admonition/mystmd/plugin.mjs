// The mystmd plugin of sphinx-gpu-admonition (written by
// `python -m sphinx_gpu_admonition.mystmd init`; myst.yml names this file).
// init and migrate replace it only while it is this text, or with --force.
//
// mystmd imports this file into its own process. One Python process, kept for the
// build and started at the first call (`--serve`: a line of JSON a request, a line a
// reply), answers every directive, role and transform. It is a child of a worker
// thread: mystmd wants a directive's or a role's answer at once (it calls them
// synchronously), so this thread waits for the worker (Atomics.wait) while the worker
// talks to the server; a transform's answer is awaited, as mystmd awaits transforms.
import { spawnSync } from "node:child_process";
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";

// what init wrote in: the interpreter, the package's version and its specification
const CONFIG = {};

const ENTRY = "from sphinx_gpu_admonition.mystmd.plugin import main; main()";
const COMMAND = `${CONFIG.python}: sphinx_gpu_admonition.mystmd.plugin`;
const DEBUG = process.argv.includes("--debug") || process.argv.includes("-d");

// what a call that fails throws (mystmd stops the build with its message)
function failed(kind, name, why, stderr, moved = true) {
  const hint = moved ? "; if the interpreter or the package moved, run python -m "
    + "sphinx_gpu_admonition.mystmd init again" : "";
  return new Error(`sphinx-gpu-admonition: ${why} (${COMMAND}, ${kind} '${name}')${hint}`
    + `\n\n${stderr ?? ""}`);
}

function debug(text) {
  if (DEBUG && text) process.stderr.write(`\n\n${text}\n\n`);
}

// The worker thread's code: it starts the server, sends it each call it gets on one of
// its two ports ("sync": a directive's or a role's, whose caller waits on `flag`;
// "async": a transform's) and sends each reply back, with the call's id, on the port
// the call came by. A server that ends, cannot start or answers what is not JSON fails
// every call after it, with the same reason.
const WORKER = `
const { workerData } = require("node:worker_threads");
const { spawn } = require("node:child_process");
const { python, entry, sync, calls, flag, version, specDigest, debug } = workerData;
let child = null;
let gone = null;
let out = "";
let err = "";
let hello = null;
let next = 1;
const pending = new Map(); // the server's request id -> where its reply goes

function answer(to, message) {
  (to.port === "sync" ? sync : calls).postMessage({ ...message, id: to.id });
  if (to.port === "sync") {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  }
}

function fail(why) {
  gone ??= why;
  for (const to of pending.values()) answer(to, { failed: gone, stderr: err.slice(-20000) });
  pending.clear();
}

function answered(line) {
  let reply;
  try {
    reply = JSON.parse(line);
  } catch {
    child.kill();
    fail("the plugin's server answered what is not JSON: " + line.slice(0, 200));
    return false;
  }
  if (hello === null) {
    hello = reply;
    if (reply.version !== version || reply.spec !== specDigest) {
      process.stderr.write("\\u26a0\\ufe0f  sphinx-gpu-admonition: this gpu_admonition.mjs was "
        + "written for version " + version + ", the interpreter has " + reply.version
        + (reply.spec !== specDigest ? " with other directives or roles" : "")
        + ": run python -m sphinx_gpu_admonition.mystmd init again\\n");
    }
    return true;
  }
  const to = pending.get(reply.id);
  if (to) {
    pending.delete(reply.id);
    answer(to, { reply });
  }
  return true;
}

function start() {
  child = spawn(python, ["-c", entry, "--serve"], { stdio: ["pipe", "pipe", "pipe"] });
  child.on("error", (error) => fail("cannot run the plugin's server: " + error.message));
  child.on("close", (code, signal) => fail("the plugin's server ended ("
    + (signal ? "signal " + signal : "exit status " + code) + ")"));
  child.stdin.on("error", () => {}); // a server that is gone: "close" says so
  child.stderr.setEncoding("utf-8");
  child.stderr.on("data", (chunk) => {
    err = (err + chunk).slice(-100000);
    if (debug) process.stderr.write("\\n\\n" + chunk + "\\n\\n");
  });
  child.stdout.setEncoding("utf-8");
  child.stdout.on("data", (chunk) => {
    let start = 0;
    let end;
    while ((end = chunk.indexOf("\\n", start)) >= 0) { // a reply a line; a page's is long
      const line = out + chunk.slice(start, end);
      out = "";
      start = end + 1;
      if (!answered(line)) return;
    }
    out += chunk.slice(start);
  });
}

function request(to, { kind, name, data }) {
  if (child === null) start();
  if (gone) {
    answer(to, { failed: gone, stderr: err.slice(-20000) });
    return;
  }
  const id = next++;
  pending.set(id, to);
  child.stdin.write(JSON.stringify({ id, kind, name, data }) + "\\n");
}

// a fault of this code must not leave a directive's caller waiting for ever
process.on("uncaughtException", (error) => fail("the plugin's worker failed: " + error.message));
Atomics.store(flag, 1, 1); // started: a caller may wait as long as its call takes
sync.on("message", (call) => request({ port: "sync", id: call.id }, call));
calls.on("message", (call) => request({ port: "async", id: call.id }, call));
`;

let bridge = null;
// how long a call waits for the worker thread to start (it takes milliseconds)
const WORKER_START_MS = 30000;

// the worker and its ports, made at the first call; it keeps node running only while a
// transform waits for its reply, so node ends with the build (and the server's input
// closes: it ends too)
function worker() {
  if (bridge !== null) return bridge;
  const sync = new MessageChannel();
  const calls = new MessageChannel();
  const flag = new Int32Array(new SharedArrayBuffer(8)); // [answered, worker started]
  const thread = new Worker(WORKER, {
    eval: true,
    execArgv: [], // CommonJS whatever node was started with (--input-type=module)
    workerData: { python: CONFIG.python, entry: ENTRY, sync: sync.port2, calls: calls.port2,
                  flag, version: CONFIG.version, specDigest: CONFIG.specDigest,
                  debug: DEBUG },
    transferList: [sync.port2, calls.port2],
  });
  bridge = { thread, sync: sync.port1, calls: calls.port1, flag, waiting: new Map(),
             next: 1 };
  bridge.calls.on("message", (message) => {
    const waiting = bridge.waiting.get(message.id);
    if (!waiting) return;
    bridge.waiting.delete(message.id);
    hold();
    waiting(message);
  });
  hold();
  return bridge;
}

function hold() {
  const busy = bridge.waiting.size > 0;
  for (const handle of [bridge.thread, bridge.calls]) {
    if (busy) handle.ref(); else handle.unref();
  }
}

// a reply's result, or the error a failed call throws
function settled(kind, name, message) {
  if (message.failed !== undefined) throw failed(kind, name, message.failed, message.stderr);
  const { reply } = message;
  if (reply.error !== undefined) {
    // as the executable plugin's non-zero exit: a --strict build's warnings fail it
    throw failed(kind, name, reply.strict ? "warnings in a --strict build" : reply.error,
      reply.stderr, false);
  }
  debug(reply.stderr);
  return reply.result;
}

// a call in a process of its own (the executable plugin's protocol): a directive's or
// a role's when the server is gone. mystmd takes a directive's error for the page's
// and goes on with exit status 0, while a transform's fails the build; so the pages
// are still read, and the transforms, which need the server, fail the build.
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

// the next answer on the sync port to the call `id`, or null when there is none yet;
// an answer to an earlier call, given up on (runOnce answered it), is dropped
function answerTo(sync, id) {
  for (let got = receiveMessageOnPort(sync); got; got = receiveMessageOnPort(sync)) {
    if (got.message.id === id) return got.message;
  }
  return null;
}

// a directive's or a role's call: this thread waits for the worker's answer (the flag
// is cleared before the port is read, so an answer posted after that read wakes it)
function callNow(kind, name, data) {
  const state = worker();
  const { sync, flag } = state;
  const id = state.next++;
  sync.postMessage({ id, kind, name, data });
  const asked = Date.now();
  for (;;) {
    Atomics.store(flag, 0, 0);
    const message = answerTo(sync, id);
    if (message !== null) {
      return message.failed === undefined ? settled(kind, name, message)
        : runOnce(kind, name, data);
    }
    if (Atomics.wait(flag, 0, 0, 1000) === "timed-out" && !Atomics.load(flag, 1)
        && Date.now() - asked > WORKER_START_MS) {
      return runOnce(kind, name, data); // the worker thread did not start
    }
  }
}

// a transform's call, awaited
function callLater(kind, name, data) {
  const state = worker();
  const id = state.next++;
  return new Promise((resolve) => {
    state.waiting.set(id, resolve);
    hold();
    state.calls.postMessage({ id, kind, name, data });
  }).then((message) => settled(kind, name, message));
}

const spec = CONFIG.spec;
const plugin = {
  ...spec,
  directives: (spec.directives ?? []).map((directive) => ({
    ...directive, run: (data) => callNow("directive", directive.name, data),
  })),
  roles: (spec.roles ?? []).map((role) => ({
    ...role, run: (data) => callNow("role", role.name, data),
  })),
  transforms: (spec.transforms ?? []).map((transform) => ({
    ...transform, plugin: () => async (tree) => {
      Object.assign(tree, await callLater("transform", transform.name, tree));
    },
  })),
};

export default plugin;
