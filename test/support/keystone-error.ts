import { KeystoneError } from '../../src/keystone';

/** Resolves with the rejection of `promise`, failing the test when it resolves or rejects with anything else. */
export async function failureOf(promise: Promise<unknown>): Promise<KeystoneError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(KeystoneError);
    return error as KeystoneError;
  }
  throw new Error('expected a KeystoneError');
}
