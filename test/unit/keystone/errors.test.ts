import { isKeystoneError, KeystoneError, kindOfStatus, redact } from '../../../src/keystone';

describe('KeystoneError', () => {
  test.each([
    [400, 'bad-request', false],
    [401, 'unauthorized', false],
    [403, 'forbidden', false],
    [404, 'not-found', false],
    [409, 'conflict', false],
    [413, 'bad-request', false],
    [408, 'timeout', true],
    [429, 'server', true],
    [500, 'server', true],
    [503, 'server', true],
  ] as const)('status %i is %s (retryable: %s)', (status, kind, retryable) => {
    expect(kindOfStatus(status)).toBe(kind);
    const error = new KeystoneError({ kind: kindOfStatus(status), status, method: 'GET', path: '/v3/x' });
    expect(error.retryable).toBe(retryable);
  });

  test('transport errors and timeouts are retryable', () => {
    expect(new KeystoneError({ kind: 'transport', method: 'GET', path: '/v3' }).retryable).toBe(true);
    expect(new KeystoneError({ kind: 'timeout', method: 'GET', path: '/v3' }).retryable).toBe(true);
  });

  test('the message names method, path, status and the detail', () => {
    const error = new KeystoneError({
      kind: 'unauthorized',
      status: 401,
      method: 'POST',
      path: '/v3/auth/tokens',
      detail: 'The request you have made requires authentication.',
    });
    expect(error.message).toBe(
      'Keystone POST /v3/auth/tokens: 401 Unauthorized: The request you have made requires authentication.',
    );
    expect(error.name).toBe('KeystoneError');
    expect(error).toBeInstanceOf(Error);
  });

  test('without a status the kind stands in', () => {
    const error = new KeystoneError({ kind: 'timeout', method: 'GET', path: '/v3', detail: 'no reply within 10 ms' });
    expect(error.message).toBe('Keystone GET /v3: timeout: no reply within 10 ms');
  });

  test('isKeystoneError narrows by kind', () => {
    const error = new KeystoneError({ kind: 'not-found', status: 404, method: 'DELETE', path: '/v3/x' });
    expect(isKeystoneError(error)).toBe(true);
    expect(isKeystoneError(error, 'not-found', 'conflict')).toBe(true);
    expect(isKeystoneError(error, 'conflict')).toBe(false);
    expect(isKeystoneError(new Error('x'))).toBe(false);
  });

  test('redact removes every occurrence of every sensitive value and ignores empty ones', () => {
    expect(redact("Invalid input for field 'secret': 's3cr3t' and s3cr3t", ['s3cr3t', ''])).toBe(
      "Invalid input for field 'secret': '***' and ***",
    );
  });
});
