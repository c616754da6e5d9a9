/**
 * Reading Keystone's JSON replies without trusting their shape: a reply that lacks what the API documents is a server
 * fault (kind `server`, retryable), not a crash somewhere later.
 */
import { KeystoneError } from './errors';

/** Whether `value` is a non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The request a reply belongs to, for error messages. */
export interface ReplyContext {
  readonly method: string;
  readonly path: string;
}

/** Reads a reply's documented fields, throwing a `server` {@link KeystoneError} when one is missing or mistyped. */
export class Reply {
  constructor(
    private readonly context: ReplyContext,
    private readonly value: Record<string, unknown>,
    private readonly where: string,
  ) {}

  /** The object under `key` of a reply body, e.g. `application_credential`. */
  static of(context: ReplyContext, body: unknown, key: string): Reply {
    const inner = isRecord(body) ? body[key] : undefined;
    if (!isRecord(inner)) throw unexpected(context, `the reply has no "${key}" object`);
    return new Reply(context, inner, key);
  }

  /** Each object of the array under `key` of a reply body, e.g. `application_credentials`. */
  static list(context: ReplyContext, body: unknown, key: string): Reply[] {
    const inner = isRecord(body) ? body[key] : undefined;
    if (!Array.isArray(inner)) throw unexpected(context, `the reply has no "${key}" list`);
    return inner.map((item, index) => {
      if (!isRecord(item)) throw unexpected(context, `${key}[${index}] is not an object`);
      return new Reply(context, item, `${key}[${index}]`);
    });
  }

  /** A `server` error for a reply that lacks something the API documents. */
  static missing(context: ReplyContext, detail: string): KeystoneError {
    return unexpected(context, detail);
  }

  string(key: string): string {
    const value = this.value[key];
    if (typeof value !== 'string') throw unexpected(this.context, `${this.where}.${key} is not a string`);
    return value;
  }

  optionalString(key: string): string | undefined {
    const value = this.value[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw unexpected(this.context, `${this.where}.${key} is not a string`);
    return value;
  }

  optionalBoolean(key: string): boolean | undefined {
    const value = this.value[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') throw unexpected(this.context, `${this.where}.${key} is not a boolean`);
    return value;
  }

  /** The nested object under `key`, or `undefined` when absent or null. */
  optionalObject(key: string): Reply | undefined {
    const value = this.value[key];
    if (value === undefined || value === null) return undefined;
    if (!isRecord(value)) throw unexpected(this.context, `${this.where}.${key} is not an object`);
    return new Reply(this.context, value, `${this.where}.${key}`);
  }

  /** The objects of the array under `key`; an absent key is an empty list. */
  objects(key: string): Reply[] {
    const value = this.value[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw unexpected(this.context, `${this.where}.${key} is not a list`);
    return value.map((item, index) => {
      if (!isRecord(item)) throw unexpected(this.context, `${this.where}.${key}[${index}] is not an object`);
      return new Reply(this.context, item, `${this.where}.${key}[${index}]`);
    });
  }

  /** The strings of the array under `key`; an absent key is an empty list. */
  strings(key: string): string[] {
    const value = this.value[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string')) {
      throw unexpected(this.context, `${this.where}.${key} is not a list of strings`);
    }
    return value;
  }

  /** A timestamp field parsed with `parse`; a parse failure is a server fault. */
  time(key: string, parse: (value: string | undefined) => Date | undefined): Date | undefined {
    try {
      return parse(this.optionalString(key));
    } catch (error) {
      if (error instanceof KeystoneError) throw error;
      throw unexpected(this.context, `${this.where}.${key} is not a timestamp`);
    }
  }
}

function unexpected(context: ReplyContext, detail: string): KeystoneError {
  return new KeystoneError({ kind: 'server', method: context.method, path: context.path, detail });
}
