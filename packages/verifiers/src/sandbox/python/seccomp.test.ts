import { describe, expect, it } from "vitest";
import { SECCOMP_ARCHITECTURES, processFilter } from "./seccomp.js";

// The kernel is the real test (run.test.ts forks under it); these pin the program's shape.
describe("processFilter", () => {
  it("has a program for x86-64 and arm64 only, so another CPU refuses to run rather than run unfiltered", () => {
    expect(SECCOMP_ARCHITECTURES).toEqual(["x64", "arm64"]);
    expect(processFilter("riscv64")).toBeUndefined();
  });

  it("checks the ABI first and ends in allow, errno and kill returns, every jump landing inside the program", () => {
    for (const arch of SECCOMP_ARCHITECTURES) {
      const bytes = processFilter(arch)!;
      expect(bytes.length % 8).toBe(0);
      const count = bytes.length / 8;
      const at = (i: number) => ({
        code: bytes.readUInt16LE(i * 8),
        jt: bytes.readUInt8(i * 8 + 2),
        jf: bytes.readUInt8(i * 8 + 3),
        k: bytes.readUInt32LE(i * 8 + 4),
      });
      expect(at(0)).toEqual({ code: 0x20, jt: 0, jf: 0, k: 4 }); // load seccomp_data.arch
      for (let i = 0; i < count; i++) {
        const { code, jt, jf } = at(i);
        if ((code & 0x07) === 0x05) {
          expect(i + 1 + jt).toBeLessThan(count);
          expect(i + 1 + jf).toBeLessThan(count);
        }
      }
      expect(at(count - 1).k).toBe(0x80000000); // SECCOMP_RET_KILL_PROCESS
      expect(at(count - 2).k).toBe(0x00050000 | 38); // ENOSYS for clone3
      expect(at(count - 3).k).toBe(0x00050000 | 1); // EPERM
    }
  });
});
