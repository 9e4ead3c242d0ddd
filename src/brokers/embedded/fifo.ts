/**
 * A first-in first-out queue with O(1) amortized push and shift. `Array.prototype.shift` is O(n),
 * which shows with tens of thousands of queued messages; here the consumed prefix is dropped in bulk.
 */
export class Fifo<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Puts an item back at the front (a message that was handed out but not settled). */
  unshift(item: T): void {
    if (this.head > 0) {
      this.head -= 1;
      this.items[this.head] = item;
    } else {
      this.items.unshift(item);
    }
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head] as T;
    // Drop the reference now so a consumed message body can be collected before the next compaction.
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
