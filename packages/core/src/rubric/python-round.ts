/**
 * Python's `round(x, ndigits)` for floats: round the exact binary value to `ndigits` decimals,
 * ties to even. JavaScript's `toFixed` breaks ties upwards, so `round(0.25, 1)` would come out
 * 0.3 instead of Python's 0.2; the reference implementation's stage rescaling is in Python.
 */
export function pythonRound(x: number, ndigits: number): number {
  if (!Number.isFinite(x)) return x;
  // toFixed(100) is exact for every double ≥ 2^-47 in magnitude, far below any score we round.
  const exact = Math.abs(x).toFixed(100);
  const dot = exact.indexOf(".");
  const kept = exact.slice(0, dot + 1 + ndigits);
  const rest = exact.slice(dot + 1 + ndigits);
  const lastKeptDigit = Number(kept.replace(".", "").slice(-1));
  const first = rest[0] ?? "0";
  const tail = rest.slice(1);
  const roundUp = first > "5" || (first === "5" && (/[1-9]/.test(tail) || lastKeptDigit % 2 === 1));
  const magnitude = Number(kept) + (roundUp ? 10 ** -ndigits : 0);
  // Re-round through toFixed to drop the binary noise the addition can introduce.
  return Math.sign(x) * Number(magnitude.toFixed(ndigits));
}
