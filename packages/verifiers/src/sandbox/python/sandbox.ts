import { accessSync, constants, lstatSync, readlinkSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";

/** Where things are inside the sandbox. Rules see these paths (e.g. via `context.files.get_path`). */
export const SANDBOX_HARNESS_PATH = "/sandbox/harness.py";
export const SANDBOX_OUTPUTS_DIR = "/sandbox/outputs";

/** The uid/gid the rule runs as inside its user namespace: `nobody`, not root. */
const SANDBOX_UID = "65534";

/** What one sandboxed run needs mounted and how it is limited. */
export interface SandboxPlan {
  readonly python: string;
  /** The descriptor bwrap copies harness.py from: a copy, so its host path is not in the mount table. */
  readonly harnessFd: number;
  /** Host file → read-only mount point inside the sandbox. */
  readonly files: readonly { readonly hostPath: string; readonly sandboxPath: string }[];
  /** Extra host paths mounted read-only at the same place (e.g. a virtualenv outside /usr). */
  readonly readOnlyPaths: readonly string[];
  /** Size cap of the writable /tmp (a tmpfs, so it is host memory). */
  readonly tmpBytes: number;
  /** The descriptor bwrap reads the seccomp filter from (see `seccomp.ts`). */
  readonly seccompFd: number;
}

/**
 * The descriptors the runner hands bwrap beyond stdio: the arguments themselves (so the
 * sandbox's /proc/1/cmdline, which is bwrap's, shows no host path), the seccomp filter and harness.py.
 */
export const BWRAP_ARGS_FD = 3;
export const BWRAP_SECCOMP_FD = 4;
export const BWRAP_HARNESS_FD = 5;

/**
 * The bubblewrap arguments for one run: every namespace unshared (no network, own pids,
 * ipc, uts, user), only what the interpreter needs mounted read-only, a small writable /tmp,
 * a read-only minimal /dev (so no /dev/shm to fill with RAM), an empty environment, and the
 * seccomp filter that forbids new processes. The host's /etc (passwd, hosts, resolv.conf),
 * /home, /root and /proc are not visible.
 */
export function bwrapArguments(plan: SandboxPlan): BwrapArguments {
  const args = [
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--uid",
    SANDBOX_UID,
    "--gid",
    SANDBOX_UID,
    "--hostname",
    "rubric-sandbox",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/usr",
    "/usr",
  ];
  // Merged-/usr systems have these as symlinks into /usr; older layouts have real directories.
  for (const dir of ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]) args.push(...mirrorSystemPath(dir));
  args.push(
    // numpy finds its BLAS through Debian's alternatives symlinks; the loader cache only speeds linking.
    "--ro-bind-try",
    "/etc/alternatives",
    "/etc/alternatives",
    "--ro-bind-try",
    "/etc/ld.so.cache",
    "/etc/ld.so.cache",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    // The device nodes stay usable (they are their own mounts); the tmpfs around them, /dev/shm
    // included, becomes read-only, so no RAM outside the memory limit can be parked there.
    "--remount-ro",
    "/dev",
    "--size",
    String(plan.tmpBytes),
    "--tmpfs",
    "/tmp",
  );
  for (const path of plan.readOnlyPaths) args.push("--ro-bind", path, path);
  args.push("--ro-bind-data", String(plan.harnessFd), SANDBOX_HARNESS_PATH);
  for (const file of plan.files) args.push("--ro-bind", file.hostPath, file.sandboxPath);
  args.push(
    "--remount-ro",
    "/",
    "--chdir",
    "/tmp",
    "--seccomp",
    String(plan.seccompFd),
    "--clearenv",
    "--setenv",
    "PATH",
    "/usr/local/bin:/usr/bin:/bin",
    "--setenv",
    "LANG",
    "C.UTF-8",
    "--setenv",
    "TMPDIR",
    "/tmp",
    // One BLAS thread: predictable CPU accounting, and per-thread buffers would eat the address space.
    "--setenv",
    "OPENBLAS_NUM_THREADS",
    "1",
    "--setenv",
    "OMP_NUM_THREADS",
    "1",
    "--setenv",
    "MKL_NUM_THREADS",
    "1",
  );
  return { options: args, command: [plan.python, "-I", "-B", "-X", "utf8", SANDBOX_HARNESS_PATH] };
}

/** bwrap's options (sent through `--args`) and the command, which bwrap wants on its real argv. */
export interface BwrapArguments {
  readonly options: readonly string[];
  readonly command: readonly string[];
}

function mirrorSystemPath(path: string): string[] {
  try {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return ["--symlink", readlinkSync(path), path];
    if (stat.isDirectory()) return ["--ro-bind", path, path];
  } catch {
    // Absent on this system (e.g. /lib32): nothing to mirror.
  }
  return [];
}

/** `name` as an absolute path if it is an executable file (looked up on PATH when it has no slash). */
export function resolveExecutable(name: string, path: string = process.env["PATH"] ?? ""): string | undefined {
  const candidates = name.includes("/")
    ? [name]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (!statSync(candidate).isFile()) continue;
      return candidate;
    } catch {
      // Not here; try the next directory.
    }
  }
  return undefined;
}

/** A file name that is safe as the last component of a mount point, keeping the rule-visible name where possible. */
export function sandboxFileName(name: string, index: number): string {
  const base = name.split(/[\\/]/).pop()?.replace(/\0/g, "") ?? "";
  return base === "" || base === "." || base === ".." ? `file-${index}` : base;
}
