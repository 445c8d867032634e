// Token buckets keyed by sender (one per frame): `burst` messages at once, refilled at `perSecond`.
// Pure bookkeeping over an injected clock, so tests drive time.

export interface RateLimit {
  burst: number;
  perSecond: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at_ms: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number,
  ) {}

  private refill(key: string): { tokens: number; at_ms: number } {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.limit.burst, at_ms: t };
    b.tokens = Math.min(this.limit.burst, b.tokens + ((t - b.at_ms) / 1000) * this.limit.perSecond);
    b.at_ms = t;
    this.buckets.set(key, b);
    return b;
  }

  /** Takes one token: true when the message may go through now. */
  take(key: string): boolean {
    const b = this.refill(key);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Milliseconds until `take(key)` would succeed. */
  waitMs(key: string): number {
    const b = this.refill(key);
    return b.tokens >= 1 ? 0 : Math.ceil(((1 - b.tokens) / this.limit.perSecond) * 1000);
  }

  /** Drops the buckets whose key starts with `prefix` (a closed tab's frames). */
  forget(prefix: string): void {
    for (const k of this.buckets.keys()) if (k.startsWith(prefix)) this.buckets.delete(k);
  }
}
