/**
 * The delivered Secret's template (issue 49), pure: cloud.conf as gcfg reads it, the OS_* keys, the substitution over
 * the closed set of fields, the digest, and whether a Secret carries the document. Properties with fast-check; the real
 * gcfg parser and a real openstackclient read the same output in test/e2e/secret-delivery.test.ts.
 */
import fc from 'fast-check';
import { TEMPLATE_FIELDS, placeholdersValid, type TemplateFields } from '../../../src/api';
import { TEMPLATE_ANNOTATION, TemplateError, carriesDocument, cloudConf, envKeys, gcfgValue, substitute, templateData, templateDigest, templateMetadata } from '../../../src/lifecycle/secret-template';

/**
 * A quoted value as gcfg's scanner and `unquote` read it (gopkg.in/gcfg.v1: scanner.go `scanValString`, read.go
 * `unquote`): within quotes `\\`, `\"`, `\n`, `\t` are escapes, any other escape and a raw newline are errors; `\r` is
 * stripped. Written from the Go source's rules, to prove the renderer round-trips before the real parser does.
 */
function gcfgUnquote(raw: string): string {
  if (!raw.startsWith('"') || !raw.endsWith('"') || raw.length < 2) throw new Error('not quoted');
  const escapes: Record<string, string> = { '\\': '\\', '"': '"', n: '\n', t: '\t' };
  let out = '';
  for (let i = 1; i < raw.length - 1; i++) {
    const c = raw[i];
    if (c === '\n') throw new Error('string not terminated');
    if (c === '"') throw new Error('unescaped quote inside the value');
    if (c !== '\\') {
      if (c !== '\r') out += c;
      continue;
    }
    const next = raw[++i];
    if (next === undefined || !(next in escapes)) throw new Error('unknown escape sequence');
    out += escapes[next];
  }
  return out;
}

const FIELDS: TemplateFields = {
  authURL: 'https://keystone.example:5000/v3',
  region: 'RegionOne',
  interface: 'public',
  applicationCredentialID: '0123456789abcdef0123456789abcdef',
  applicationCredentialSecret: 'abc_DEF-123',
  userID: 'u1',
  projectID: 'p1',
  projectName: 'workflow-project',
  projectDomainName: 'Default',
};

describe('cloud.conf as gcfg reads it', () => {
  it('renders the [Global] section with every value quoted', () => {
    expect(cloudConf(FIELDS)).toBe(
      '[Global]\n' +
        'auth-url = "https://keystone.example:5000/v3"\n' +
        'application-credential-id = "0123456789abcdef0123456789abcdef"\n' +
        'application-credential-secret = "abc_DEF-123"\n' +
        'region = "RegionOne"\n' +
        'os-endpoint-type = "public"\n',
    );
  });

  it('leaves out region and os-endpoint-type where they are not known', () => {
    expect(cloudConf({ authURL: 'u', applicationCredentialID: 'i', applicationCredentialSecret: 's' })).not.toMatch(/region|os-endpoint-type/);
  });

  it('round-trips every value without CR, NUL or a lone surrogate: #, ;, quotes, backslashes, blanks, newlines, tabs', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 80 }).filter((s) => !/[\r\0]/.test(s));
    fc.assert(
      fc.property(text, (value) => {
        expect(gcfgUnquote(gcfgValue('applicationCredentialSecret', value))).toBe(value);
      }),
      { numRuns: 500 },
    );
    for (const hard of ['a#b', 'a;b', ' lead', 'trail ', 'q"uo"te', 'back\\slash', 'new\nline', 'tab\tbed', '=', '"']) expect(gcfgUnquote(gcfgValue('x', hard))).toBe(hard);
  });

  it('refuses what gcfg cannot carry, naming the field and never the value', () => {
    for (const bad of ['a\rb', 'a\0b', 'a\uD800b']) {
      expect(() => gcfgValue('applicationCredentialSecret', bad)).toThrow(TemplateError);
      expect(() => gcfgValue('applicationCredentialSecret', bad)).toThrow(/cannot carry the applicationCredentialSecret/);
    }
  });
});

describe('the OS_* keys', () => {
  it('are what openstackclient reads for an application credential', () => {
    expect(envKeys(FIELDS)).toEqual({
      OS_AUTH_TYPE: 'v3applicationcredential',
      OS_AUTH_URL: FIELDS.authURL,
      OS_APPLICATION_CREDENTIAL_ID: FIELDS.applicationCredentialID,
      OS_APPLICATION_CREDENTIAL_SECRET: FIELDS.applicationCredentialSecret,
      OS_REGION_NAME: 'RegionOne',
      OS_INTERFACE: 'public',
      OS_IDENTITY_API_VERSION: '3',
    });
  });
});

describe('free keys: a substitution over the closed set of fields', () => {
  /** Text with single braces that opens no placeholder: a `{` never followed by another, nor ending the text. */
  const literal = fc.string({ maxLength: 20 }).map((s) => s.replace(/\{/g, '{ '));
  const field = fc.constantFrom(...TEMPLATE_FIELDS);
  const piece = fc.oneof(literal.map((text) => ({ text })), fc.tuple(field, fc.constantFrom('', ' ', '  ')).map(([name, pad]) => ({ name, pad })));

  it('replaces each placeholder by its field and leaves everything else as written; the CEL twin accepts it', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const template = pieces.map((p) => ('text' in p ? p.text : `{{${p.pad}${p.name}${p.pad}}}`)).join('');
        const expected = pieces.map((p) => ('text' in p ? p.text : FIELDS[p.name])).join('');
        expect(placeholdersValid(template)).toBe(true);
        expect(substitute('k', template, FIELDS)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a placeholder of any other name, and a {{ that opens nothing, as the CRD does', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z]{1,12}$/).filter((n) => !(TEMPLATE_FIELDS as readonly string[]).includes(n)), (name) => {
        expect(placeholdersValid(`x {{ ${name} }} y`)).toBe(false);
        expect(() => substitute('k', `{{ ${name} }}`, FIELDS)).toThrow(TemplateError);
      }),
    );
    for (const bad of ['{{', '{{ authURL }', '{{{ authURL }}', '{{ env.HOME }}', '{{ authURL | upper }}', '{{ .authURL }}']) expect(placeholdersValid(bad)).toBe(false);
    for (const good of ['{', '{a}', 'x {', '{ {', '{}{}', '}}', '{{ authURL }}}']) expect(placeholdersValid(good)).toBe(true);
  });

  it('refuses a field this face does not know, naming the key and the field', () => {
    expect(() => substitute('region.txt', '{{ region }}', { authURL: 'u' })).toThrow('secretTemplate.data.region.txt names {{ region }}, which is not known here');
  });

  it('writes the formats, then the free keys', () => {
    expect(Object.keys(templateData({ formats: ['Env', 'CloudConf'], data: { 'id.txt': '{{applicationCredentialID}}' } }, FIELDS))).toEqual([
      'cloud.conf',
      'OS_AUTH_TYPE',
      'OS_AUTH_URL',
      'OS_APPLICATION_CREDENTIAL_ID',
      'OS_APPLICATION_CREDENTIAL_SECRET',
      'OS_REGION_NAME',
      'OS_INTERFACE',
      'OS_IDENTITY_API_VERSION',
      'id.txt',
    ]);
    expect(templateData(undefined, FIELDS)).toEqual({});
  });
});

describe('the digest and whether a Secret carries the document', () => {
  const record = fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.string({ maxLength: 6 }), { maxKeys: 4 });

  it('the digest depends on the template, not on the order its keys were written in; none for an empty template', () => {
    fc.assert(
      fc.property(record, record, fc.subarray(['CloudConf', 'Env'] as const), (labels, data, formats) => {
        const reversed = (r: Record<string, string>) => Object.fromEntries(Object.entries(r).reverse());
        expect(templateDigest({ labels, data, formats })).toBe(templateDigest({ labels: reversed(labels), data: reversed(data), formats: [...formats].reverse() }));
      }),
    );
    expect(templateDigest(undefined)).toBeUndefined();
    expect(templateDigest({ labels: {}, formats: [] })).toBeUndefined();
    expect(templateDigest({ formats: ['Env'] })).not.toBe(templateDigest({ formats: ['CloudConf'] }));
  });

  const data = { 'clouds.yaml': 'c', application_credential_id: 'i', application_credential_secret: 's', 'cloud.conf': 'x' };
  const metadata = templateMetadata({ labels: { team: 'a' }, annotations: { note: 'n' }, formats: ['CloudConf'] });

  it('a Secret carries it with every key, label and annotation; another writer\'s additions do not matter', () => {
    expect(carriesDocument({ data: { ...data, extra: 'foreign' }, labels: { ...metadata.labels, other: 'x' }, annotations: { ...metadata.annotations } }, data, metadata)).toBe(true);
  });

  it('an edited or missing key, label or annotation, or a Secret written under another template, does not', () => {
    expect(carriesDocument({ data: { ...data, 'cloud.conf': 'edited' }, labels: metadata.labels, annotations: metadata.annotations }, data, metadata)).toBe(false);
    expect(carriesDocument({ data, labels: {}, annotations: metadata.annotations }, data, metadata)).toBe(false);
    expect(carriesDocument({ data, labels: metadata.labels, annotations: { ...metadata.annotations, [TEMPLATE_ANNOTATION]: 'older' } }, data, metadata)).toBe(false);
    // The template was removed: the Secret still carries the digest of the old one, and its keys must go.
    expect(carriesDocument({ data, annotations: metadata.annotations }, data, { labels: {}, annotations: {} })).toBe(false);
    expect(carriesDocument({ data }, data, { labels: {}, annotations: {} })).toBe(true);
  });
});
