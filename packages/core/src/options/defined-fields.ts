/**
 * `value` without its `undefined` fields. The toolkit leaves `exactOptionalPropertyTypes` off
 * (docs/architecture.md, "Optional fields"), so a caller may pass `{ batches: undefined }` for "the
 * default"; a merge over defaults, `{ ...DEFAULTS, ...options }`, would then overwrite the default
 * with `undefined`. Every such merge spreads `definedFields(options)` instead.
 *
 * @example
 * ({ ...{ batches: 12, eps: 3e-4 }, ...definedFields({ batches: undefined, eps: 1e-3 }) }); // { batches: 12, eps: 0.001 }
 */
export function definedFields<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
