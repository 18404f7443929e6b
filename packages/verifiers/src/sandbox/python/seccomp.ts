/**
 * The seccomp filter bubblewrap installs on the rule's interpreter (`bwrap --seccomp FD`).
 *
 * It enforces, in the kernel, what the audit hook in harness.py only asks: a rule starts no
 * process (fork, vfork, and clone without CLONE_THREAD fail with EPERM; threads still work), and
 * it holds no memory outside its address-space limit (memfd_create, memfd_secret and System V
 * shmget fail with EPERM: their pages count against no rlimit), and it parks nothing in the
 * kernel's keyrings (add_key, request_key and keyctl fail with EPERM: keys outlive the sandbox,
 * and as the sandbox's uid maps to the host's, they fill that user's key quota on the host). A kernel filter is used rather
 * than RLIMIT_NPROC because a host running as root is exempt from that limit (the sandbox's uid
 * maps to the host's). Threads, which a filter cannot count, are capped in `task-limit.ts`.
 *
 * clone3 answers ENOSYS, so glibc falls back to clone, whose flags the filter can read (clone3
 * passes them in memory a filter cannot see). A syscall from any other ABI (i386 `int 0x80`, x32)
 * kills the process, so the numbers below cannot be dodged.
 */

/** Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h). */
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const EPERM = 1;
const ENOSYS = 38;
const CLONE_THREAD = 0x00010000;
/** Offsets into `struct seccomp_data`: nr, arch, then args[0]'s low 32 bits (little-endian hosts). */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const ARG0_LOW_OFFSET = 16;

interface SyscallTable {
  /** AUDIT_ARCH_* of the ABI the interpreter uses. */
  readonly auditArch: number;
  /** Syscalls that would start a process, hold unaccounted memory or reach the keyrings. */
  readonly denied: readonly number[];
  readonly clone: number;
  readonly clone3: number;
  /** Syscall numbers at or above this belong to another ABI sharing the arch value (x86-64's x32). */
  readonly foreignAbove?: number;
}

const TABLES: Readonly<Record<string, SyscallTable>> = {
  // arch/x86/entry/syscalls/syscall_64.tbl: fork 57, vfork 58, shmget 29, memfd_create 319, memfd_secret 447,
  // add_key 248, request_key 249, keyctl 250.
  x64: {
    auditArch: 0xc000003e,
    denied: [57, 58, 29, 319, 447, 248, 249, 250],
    clone: 56,
    clone3: 435,
    foreignAbove: 0x40000000,
  },
  // include/uapi/asm-generic/unistd.h (no fork/vfork there): shmget 194, memfd_create 279, memfd_secret 447,
  // add_key 217, request_key 218, keyctl 219.
  arm64: { auditArch: 0xc00000b7, denied: [194, 279, 447, 217, 218, 219], clone: 220, clone3: 435 },
};

/** The architectures {@link processFilter} has syscall numbers for (Node's `process.arch` names). */
export const SECCOMP_ARCHITECTURES = Object.keys(TABLES);

type Instruction = readonly [code: number, jt: number, jf: number, k: number];

/**
 * The filter as the bytes of a `struct sock_fprog` body (8 bytes per instruction), or `undefined`
 * for an architecture without a table — the caller must then refuse to run, not run unfiltered.
 *
 * @example
 * processFilter("x64")!.length % 8 === 0; // true
 */
export function processFilter(arch: string = process.arch): Buffer | undefined {
  const table = TABLES[arch];
  if (table === undefined) return undefined;
  // Jump targets are relative, so the program is laid out first and the tails are fixed at the end:
  // [checks…] ALLOW, CLONE-CHECK, DENY, NOSYS, KILL.
  const checks: Array<Instruction | ((at: number, labels: Labels) => Instruction)> = [
    [BPF_LD_W_ABS, 0, 0, ARCH_OFFSET],
    (at, l) => [BPF_JEQ_K, 0, l.kill - at - 1, table.auditArch],
    [BPF_LD_W_ABS, 0, 0, NR_OFFSET],
  ];
  if (table.foreignAbove !== undefined) {
    const foreignAbove = table.foreignAbove;
    checks.push((at, l) => [BPF_JGE_K, l.kill - at - 1, 0, foreignAbove]);
  }
  for (const nr of table.denied) checks.push((at, l) => [BPF_JEQ_K, l.deny - at - 1, 0, nr]);
  checks.push((at, l) => [BPF_JEQ_K, l.nosys - at - 1, 0, table.clone3]);
  checks.push((at, l) => [BPF_JEQ_K, l.cloneCheck - at - 1, 0, table.clone]);
  const allow = checks.length;
  const labels: Labels = { cloneCheck: allow + 1, deny: allow + 4, nosys: allow + 5, kill: allow + 6 };
  const program: Instruction[] = checks.map((step, at) => (typeof step === "function" ? step(at, labels) : step));
  program.push(
    [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW],
    [BPF_LD_W_ABS, 0, 0, ARG0_LOW_OFFSET],
    // A thread shares the process; anything else clone makes is a new process.
    [BPF_JSET_K, 0, 1, CLONE_THREAD],
    [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW],
    [BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM],
    [BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS],
    [BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS],
  );
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    bytes.writeUInt16LE(code, i * 8);
    bytes.writeUInt8(jt, i * 8 + 2);
    bytes.writeUInt8(jf, i * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return bytes;
}

interface Labels {
  readonly cloneCheck: number;
  readonly deny: number;
  readonly nosys: number;
  readonly kill: number;
}
