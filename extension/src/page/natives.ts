// Replacing built-ins in the page's own world without changing how they look: a replacement keeps the
// original's name and length, and Function.prototype.toString answers for it with the original's
// source ("[native code]"). Hostile territory: everything used here is captured before page scripts run.

const REPLACED = new WeakMap<object, object>();
const apply = Reflect.apply;
let toStringPatched = false;

function mimic<F extends object>(fn: F, original: object): F {
  const define = Object.defineProperty;
  const name = Object.getOwnPropertyDescriptor(original, 'name');
  const length = Object.getOwnPropertyDescriptor(original, 'length');
  if (name) define(fn, 'name', name);
  if (length) define(fn, 'length', length);
  REPLACED.set(fn, original);
  return fn;
}

/** Make Function.prototype.toString report replaced functions as their originals (once per realm). */
export function maskToString(fnProto: typeof Function.prototype): void {
  if (toStringPatched && fnProto === Function.prototype) return;
  const original = fnProto.toString;
  const replacement = {
    toString(this: unknown): string {
      const target = (typeof this === 'function' && REPLACED.get(this)) || this;
      return original.call(target);
    },
  }.toString;
  mimic(replacement, original);
  Object.defineProperty(fnProto, 'toString', {
    value: replacement,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  if (fnProto === Function.prototype) toStringPatched = true;
}

/** Replace `proto[key]` (a method) with `make(original)`. Returns the original, or null if absent. */
export function replaceMethod<T extends object, K extends keyof T & string>(
  proto: T | undefined,
  key: K,
  make: (original: T[K]) => T[K],
): T[K] | null {
  if (!proto) return null;
  const d = Object.getOwnPropertyDescriptor(proto, key);
  if (!d || typeof d.value !== 'function') return null;
  const original = d.value as T[K];
  Object.defineProperty(proto, key, { ...d, value: mimic(make(original) as object, d.value) });
  return original;
}

/** Replace `proto[key]` (a method) with one that calls the original with the same receiver and
 * arguments, then `after(self, args, result)`, and returns the original's result (what it throws, the
 * page gets, and `after` does not run). Returns the original, or null if absent. */
export function followMethod<T extends object, K extends keyof T & string>(
  proto: T | undefined,
  key: K,
  after: (self: T, args: unknown[], result: unknown) => void,
): T[K] | null {
  return replaceMethod(proto, key, (original) => {
    const { method } = {
      // Method shorthand, like every replacement: not constructible and without a `prototype`.
      method(this: T, ...args: unknown[]): unknown {
        const out = apply(original as (...a: unknown[]) => unknown, this, args);
        after(this, args, out);
        return out;
      },
    };
    return method as T[K];
  });
}

export interface Accessor<V> {
  get: (self: unknown) => V;
  set?: (self: unknown, value: V) => void;
}

/** Replace an accessor property: `make` gets the original getter/setter (as plain functions of `self`)
 * and returns the new getter (and setter, when the original has one). */
export function replaceAccessor<V>(
  proto: object | undefined,
  key: string,
  make: (original: Accessor<V>) => { get(this: unknown): V; set?(this: unknown, v: V): void },
): Accessor<V> | null {
  if (!proto) return null;
  const d = Object.getOwnPropertyDescriptor(proto, key);
  if (!d?.get) return null;
  const get = d.get;
  const set = d.set;
  const original: Accessor<V> = {
    get: (self) => get.call(self) as V,
    set: set ? (self, v) => set.call(self, v) : undefined,
  };
  const next = make(original);
  const nd: PropertyDescriptor = { ...d, get: mimic(next.get, get) };
  if (set && next.set) nd.set = mimic(next.set, set);
  Object.defineProperty(proto, key, nd);
  return original;
}

/** Replace only the setter of an accessor property (the getter stays the browser's own function):
 * `make` gets the original setter as a plain function of `self`. Returns it, or null if absent. */
export function replaceSetter<V>(
  proto: object | undefined,
  key: string,
  make: (original: (self: unknown, value: V) => void) => (this: unknown, v: V) => void,
): ((self: unknown, value: V) => void) | null {
  if (!proto) return null;
  const d = Object.getOwnPropertyDescriptor(proto, key);
  const set = d?.set;
  if (!d || !set) return null;
  const original = (self: unknown, v: V) => {
    apply(set, self, [v]);
  };
  Object.defineProperty(proto, key, { ...d, set: mimic(make(original), set) });
  return original;
}

/** A constructor whose instances are built by `construct` (Reflect.construct keeps `new.target`, so
 * subclasses and instanceof work); the prototype's `constructor` points at the replacement. */
export function replaceConstructor<C extends abstract new (...args: never[]) => unknown>(
  holder: object,
  key: string,
  construct: (original: C, args: unknown[], newTarget: object) => object,
): C | null {
  const d = Object.getOwnPropertyDescriptor(holder, key);
  const original = d?.value as C | undefined;
  if (!d || typeof original !== 'function') return null;
  const proxy: C = new Proxy(original, {
    construct: (target, args, newTarget): object =>
      construct(target, args, newTarget === proxy ? (target as object) : newTarget),
  });
  // toString of a Proxy would read `function () { [native code] }`, without the name.
  REPLACED.set(proxy as object, original as object);
  Object.defineProperty(holder, key, { ...d, value: proxy });
  const proto = (original as unknown as { prototype?: object }).prototype;
  if (proto) {
    const cd = Object.getOwnPropertyDescriptor(proto, 'constructor');
    if (cd) Object.defineProperty(proto, 'constructor', { ...cd, value: proxy });
  }
  return original;
}
