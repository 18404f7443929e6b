import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Effect } from "effect";
import { PythonSandboxUnavailableError } from "./errors.js";

/*
 * How many threads a rule may run. Each thread is a kernel task whose stack and bookkeeping (about
 * 20 KiB) count against no rlimit, and tasks are a host-wide resource (pid_max): 28,000 threads
 * with 256-byte stacks took a host from 92 tasks to 28,106 in 2.5 s and held 650 MB outside
 * RLIMIT_AS. Two kernel mechanisms cap them, measured on Linux 6.18 with bubblewrap 0.8:
 *
 * - RLIMIT_NPROC, set by harness.py inside the sandbox. Since Linux 5.14 it counts tasks per user
 *   namespace, so each sandbox is counted alone (three sandboxes under uid 65534 held 50 threads
 *   each under a limit of 64). But the kernel exempts tasks whose real uid is the host's root, and
 *   the sandbox's uid maps to the uid that started bwrap: on a root host it holds nothing (2,000
 *   threads started under a limit of 64).
 * - A pids cgroup, which counts every task in it whoever owns it, but which only root (or a
 *   delegated user) can create. So on a root host the sandbox is started inside a pids cgroup of
 *   its own, and a root host where none can be made runs no rule rather than run it uncapped.
 *
 * The seccomp filter cannot count, and bwrap has no option for either.
 */

/** Tasks bwrap itself keeps in the cgroup beside the interpreter: the launcher (sh, prlimit and bwrap, one pid by exec) and the sandbox's pid 1. */
const SANDBOX_OVERHEAD_TASKS = 2;

/** A pids cgroup made for one sandbox run; removed when the run ends. */
export interface TaskCgroup {
  readonly dir: string;
}

let made = 0;

/**
 * Makes a pids cgroup allowing the interpreter `maxThreads` tasks, under this process's own
 * cgroup in the pids hierarchy (so any limit above it still applies).
 * Fails with PythonSandboxUnavailableError when no pids hierarchy is mounted or writable here.
 */
export function makeTaskCgroup(maxThreads: number): Effect.Effect<TaskCgroup, PythonSandboxUnavailableError> {
  return Effect.try({
    try: () => {
      const parent = ownPidsCgroup();
      if (parent === undefined) throw new Error("no cgroup hierarchy with the pids controller is mounted");
      const dir = join(parent, `rubric-sandbox-${process.pid}-${++made}`);
      mkdirSync(dir);
      try {
        // In cgroup v2 pids.max exists only where the parent delegates the controller.
        writeFileSync(join(dir, "pids.max"), String(maxThreads + SANDBOX_OVERHEAD_TASKS));
      } catch (error) {
        rmdirSync(dir);
        throw error;
      }
      return { dir };
    },
    catch: (error) =>
      new PythonSandboxUnavailableError({
        message:
          `cannot cap the rule's threads: running as root, where the kernel exempts the sandbox from RLIMIT_NPROC, and no pids cgroup can be made (${(error as Error).message}); ` +
          "run the verifier as a user other than root (RLIMIT_NPROC then holds), or give this process a writable pids cgroup",
      }),
  });
}

/** Removes the run's cgroup. Its tasks are gone once the sandbox has closed, but the kernel may still be reaping them. */
export function removeTaskCgroup(cgroup: TaskCgroup): Effect.Effect<void> {
  return Effect.promise(async () => {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        rmdirSync(cgroup.dir);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EBUSY") return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    // Left behind empty: harmless, and not worth failing a scored rule for.
  });
}

/**
 * The command that starts `command` inside the cgroup: a shell that moves itself in and then
 * execs it, so every task the sandbox ever makes is born inside (moving bwrap in after it started
 * would leave the tasks it had already forked outside). `env -i` drops what the shell exports
 * (PWD, a host path), so bwrap, which the rule can read as its pid 1, still starts with no environment.
 */
export function inTaskCgroup(cgroup: TaskCgroup, command: string, args: readonly string[]): [string, string[]] {
  return [
    "/bin/sh",
    ["-c", 'echo $$ > "$0" && exec /usr/bin/env -i "$@"', join(cgroup.dir, "cgroup.procs"), command, ...args],
  ];
}

/** This process's cgroup directory in the hierarchy that has the pids controller, if one is mounted. */
function ownPidsCgroup(): string | undefined {
  const own = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    // "<id> <parent> <dev> <root> <mount point> <options> [optional…] - <type> <source> <super options>"
    const [before, after] = line.split(" - ");
    if (before === undefined || after === undefined) continue;
    const [, , , root, mountPoint] = before.split(" ");
    const [type, , superOptions = ""] = after.split(" ");
    if (root === undefined || mountPoint === undefined) continue;
    let path: string | undefined;
    if (type === "cgroup" && superOptions.split(",").includes("pids"))
      path = own.find((l) => l.split(":")[1]?.split(",").includes("pids"))?.split(":")[2];
    else if (type === "cgroup2" && controllers(mountPoint).includes("pids"))
      path = own.find((l) => l.startsWith("0::"))?.slice(3);
    if (path === undefined) continue;
    const relative = root === "/" ? path : path.startsWith(root) ? path.slice(root.length) : undefined;
    if (relative !== undefined) return join(mountPoint.replace(/\\040/g, " "), relative);
  }
  return undefined;
}

function controllers(mountPoint: string): string[] {
  try {
    return readFileSync(join(mountPoint, "cgroup.controllers"), "utf8").trim().split(/\s+/);
  } catch {
    return [];
  }
}
