// Defining the fakes' accessors on their prototypes, where Chromium has them (micoff captures and
// replaces accessors there, not on instances).

export const accessor = <T>(
  get: (this: T) => unknown,
  set?: (this: T, v: never) => void,
): PropertyDescriptor => ({
  get,
  set,
  configurable: true,
  enumerable: true,
});

export const define = (C: { prototype: object }, props: Record<string, PropertyDescriptor>) =>
  Object.defineProperties(C.prototype, props);
