import type { AuditRecord } from '../audit/record.js';

export type CallRecord = Omit<AuditRecord, 'prev_hash'>;

/** The last calls of this process, newest last (the console's live table). */
export class CallLog {
  private readonly items: CallRecord[] = [];
  constructor(private readonly max = 500) {}
  add(r: CallRecord): void {
    this.items.push(r);
    if (this.items.length > this.max) this.items.splice(0, this.items.length - this.max);
  }
  all(): CallRecord[] {
    return [...this.items];
  }
}
