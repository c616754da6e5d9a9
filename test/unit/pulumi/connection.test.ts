/** Where the provider gets the Keystone connection: explicit inputs, OS_CLOUD with clouds.yaml (+ secure.yaml), OS_*. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConnectionError, connectionProblems, resolveConnection } from '../../../src/pulumi/connection';

/** A dir with clouds.yaml (`DIR` in it replaced by the dir), an optional secure.yaml and ca.pem holding `PEM`. */
function cloudsDir(clouds: string, secure?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'kac-clouds-'));
  writeFileSync(join(dir, 'clouds.yaml'), clouds.replace('DIR', dir));
  if (secure !== undefined) writeFileSync(join(dir, 'secure.yaml'), secure);
  writeFileSync(join(dir, 'ca.pem'), 'PEM');
  return dir;
}

describe('resolveConnection', () => {
  it('reads the OS_* variables, with the Default domain unless one is given', () => {
    const c = resolveConnection(undefined, { OS_AUTH_URL: 'https://ks.example/v3/', OS_USERNAME: 'svc', OS_PASSWORD: 'pw', OS_PROJECT_NAME: 'p', OS_PROJECT_DOMAIN_ID: 'd1', OS_REGION_NAME: 'R1' });
    expect(c.source).toBe('OS_* variables');
    expect(c.authUrl).toBe('https://ks.example/v3');
    expect(c.regionName).toBe('R1');
    expect(c.session.auth).toEqual({ method: 'password', user: { name: 'svc', domainName: 'Default' }, password: 'pw', project: { name: 'p', domainId: 'd1' } });
  });

  it('prefers OS_CLOUD over the OS_* variables, merges secure.yaml and reads the CA bundle', () => {
    const dir = cloudsDir(
      `clouds:\n  prod:\n    auth_type: password\n    region_name: RegionTwo\n    cacert: DIR/ca.pem\n    auth:\n      auth_url: https://ks.prod/v3\n      username: bot\n      user_domain_name: Ops\n      project_id: pid\n`,
      `clouds:\n  prod:\n    auth:\n      password: from-secure\n`,
    );
    const c = resolveConnection(undefined, { OS_CLOUD: 'prod', OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml'), OS_AUTH_URL: 'https://ignored/v3' });
    expect(c.source).toBe('clouds.yaml cloud "prod" (OS_CLOUD)');
    expect(c.authUrl).toBe('https://ks.prod/v3');
    expect(c.regionName).toBe('RegionTwo');
    expect(c.session.caBundle).toBe('PEM');
    expect(c.session.auth).toEqual({ method: 'password', user: { name: 'bot', domainName: 'Ops' }, password: 'from-secure', project: { id: 'pid' } });
  });

  it('takes explicit inputs over the environment, or an explicit cloud', () => {
    const dir = cloudsDir(`clouds:\n  dev:\n    auth:\n      auth_url: https://ks.dev/v3\n      user_id: u\n      password: p\n      project_id: q\n`);
    const env = { OS_CLOUD: 'nope', OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') };
    expect(resolveConnection({ authUrl: 'https://ks.in/v3', userId: 'u1', password: 'x', projectId: 'p1' }, env).source).toBe('connection');
    expect(resolveConnection({ cloud: 'dev' }, env).authUrl).toBe('https://ks.dev/v3');
  });

  it('names what is missing and never the password', () => {
    expect(() => resolveConnection(undefined, {})).toThrow(new ConnectionError('OS_* variables: the auth URL is missing (set OS_AUTH_URL or OS_CLOUD, or the connection input)'));
    expect(() => resolveConnection({ authUrl: 'https://k/v3', userId: 'u' }, {})).toThrow(new ConnectionError('connection: the password is missing (set connection.password)'));
    expect(() => resolveConnection({ authUrl: 'https://k/v3', password: 'pw', userId: 'u' }, {})).toThrow(
      new ConnectionError('connection: the project is missing (set connection.projectName or connection.projectId)'),
    );
    expect(() => resolveConnection(undefined, { OS_AUTH_URL: 'https://k/v3', OS_PASSWORD: 'pw' })).toThrow(new ConnectionError('OS_* variables: the user is missing (set OS_USERNAME or OS_USER_ID)'));
    expect(() => resolveConnection(undefined, { OS_AUTH_URL: 'https://k/v3', OS_PASSWORD: 'secret-pw', OS_PROJECT_ID: 'p' })).toThrow('the user is missing');
    expect(() => resolveConnection(undefined, { OS_AUTH_URL: 'https://k/v3', OS_PASSWORD: 'secret-pw', OS_PROJECT_ID: 'p' })).not.toThrow('secret-pw');
    expect(() => resolveConnection({ cloud: 'absent' }, { OS_CLIENT_CONFIG_FILE: '/nonexistent/clouds.yaml', HOME: '/nonexistent' })).toThrow('no clouds.yaml defines the cloud "absent"');
  });

  it('refuses a cloud that does not authenticate with a password', () => {
    const dir = cloudsDir(`clouds:\n  ac:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: https://k/v3\n`);
    expect(() => resolveConnection({ cloud: 'ac' }, { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') })).toThrow('auth_type v3applicationcredential');
  });

  it('names the clouds.yaml key of a missing field', () => {
    const dir = cloudsDir(`clouds:\n  dev:\n    auth:\n      auth_url: https://ks.dev/v3\n      user_id: u\n      project_id: q\n`);
    expect(() => resolveConnection({ cloud: 'dev' }, { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') })).toThrow(
      new ConnectionError('connection.cloud: clouds.yaml cloud "dev": the password is missing (set auth.password in clouds.yaml or secure.yaml)'),
    );
  });
});

describe('a clouds.yaml or secure.yaml that is not valid YAML', () => {
  test.each(['clouds.yaml', 'secure.yaml'])('%s: the error names the file and never quotes its lines (secure.yaml holds passwords)', (broken) => {
    const dir = mkdtempSync(join(tmpdir(), 'kac-clouds-'));
    const good = { 'clouds.yaml': 'clouds:\n  c:\n    auth:\n      auth_url: http://k\n      username: u\n', 'secure.yaml': 'clouds:\n  c:\n    auth:\n      password: fine\n' };
    const bad = 'clouds:\n  c:\n    auth:\n      password: PASSWORD-MUST-NOT-LEAK\n     x: [unclosed\n';
    for (const file of ['clouds.yaml', 'secure.yaml'] as const) writeFileSync(join(dir, file), file === broken ? bad : good[file]);
    let error: unknown;
    try {
      resolveConnection({ cloud: 'c' }, { HOME: dir, OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') }, dir);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toContain(`${join(dir, broken)} is not valid YAML: `);
    expect(`${(error as Error).message} ${(error as Error).stack}`).not.toContain('PASSWORD-MUST-NOT-LEAK');
  });
});

describe('connectionProblems', () => {
  it('is empty for a connection that can be assembled, from the inputs, a cloud or the variables', () => {
    const dir = cloudsDir(`clouds:\n  dev:\n    auth:\n      auth_url: https://ks.dev/v3\n      user_id: u\n      password: p\n      project_id: q\n`);
    expect(connectionProblems({ authUrl: 'https://ks.in/v3', userId: 'u1', password: 'x', projectId: 'p1' }, {})).toEqual([]);
    expect(connectionProblems({ cloud: 'dev' }, { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') })).toEqual([]);
    expect(connectionProblems(undefined, { OS_AUTH_URL: 'https://k/v3', OS_USER_ID: 'u', OS_PASSWORD: 'pw', OS_PROJECT_ID: 'p' })).toEqual([]);
  });

  it("names a clouds.yaml cloud's bad value by its key and source, and its CA file when it is no PEM", () => {
    const dir = cloudsDir(
      `clouds:\n  dev:\n    cacert: DIR/ca.pem\n    region_name: "   "\n    auth:\n      auth_url: https://ks.dev/identity\n      username: ${'u'.repeat(256)}\n      password: p\n      project_id: q\n`,
    );
    expect(connectionProblems({ cloud: 'dev' }, { OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml') })).toEqual([
      'connection.cloud: clouds.yaml cloud "dev": auth.auth_url ("https://ks.dev/identity"): must end in /v3 (the identity API v3 endpoint)',
      "connection.cloud: clouds.yaml cloud \"dev\": auth.username (256 characters): must be at most 255 characters long (Keystone's limit for user names)",
      `connection.cloud: clouds.yaml cloud "dev": cacert file ${join(dir, 'ca.pem')} ("PEM"): must hold PEM certificates (-----BEGIN CERTIFICATE-----)`,
      'connection.cloud: clouds.yaml cloud "dev": region_name ("   "): must not be only whitespace',
    ]);
  });

  it('never shows the password, whatever is wrong with it', () => {
    const problems = [
      ...connectionProblems({ authUrl: 'https://k/v3', userId: 'u', projectId: 'p', password: ` ${'secret-pw'.repeat(500)} ` }, {}),
      ...connectionProblems(undefined, { OS_AUTH_URL: 'https://k/v3', OS_USER_ID: 'u', OS_PROJECT_ID: 'p', OS_PASSWORD: 'secret-pw'.repeat(500) }),
    ];
    expect(problems).toHaveLength(2);
    expect(problems.join()).not.toContain('secret-pw');
  });
});
