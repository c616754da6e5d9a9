/**
 * docs/reference/pulumi.md's input and output tables against the provider plugin's schema (src/pulumi/plugin/schema.ts): every
 * input of the schema has a row (the rotation block by its two fields) with the schema's default, and every status
 * output has a row, so the documentation and the schema every SDK is generated from cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APPLICATION_CREDENTIAL, packageSchema } from '../../../src/pulumi/plugin/schema';
import { STATUS_OUTPUTS } from '../../../src/pulumi/state';

const DOC = readFileSync(join(__dirname, '../../../docs/reference/pulumi.md'), 'utf8');
const schema = packageSchema('0.0.0');
const resource = schema.resources[APPLICATION_CREDENTIAL];

/** The rows of the first table under `## heading`: each code name of the first cell → the other cells. */
function table(heading: string): Map<string, string[]> {
  const lines = DOC.slice(DOC.indexOf(`## ${heading}\n`)).split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
  const rows = new Map<string, string[]>();
  for (const line of lines.slice(start + 2, end)) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    for (const name of cells[0].match(/`([^`]+)`/g) ?? []) rows.set(name.replace(/`/g, ''), cells.slice(1));
  }
  return rows;
}

describe('docs/reference/pulumi.md against the plugin schema', () => {
  const inputs = table('Inputs');
  const outputs = table('Outputs');
  const rotation = schema.types['keystone-appcred:index:Rotation'].properties;

  it.each(Object.keys(resource.inputProperties).filter((k) => k !== 'rotation'))('the input %s has a row with the schema default', (name) => {
    const row = inputs.get(name);
    expect(row).toBeDefined();
    const fallback = (resource.inputProperties as Record<string, { default?: unknown }>)[name].default;
    if (fallback !== undefined) expect(row![0]).toBe(`\`${String(fallback)}\``);
  });

  it.each(Object.keys(rotation))('the input rotation.%s has a row with the schema default', (name) => {
    expect(inputs.get(`rotation.${name}`)?.[0]).toBe(`\`${String(rotation[name as keyof typeof rotation].default)}\``);
  });

  it.each([...STATUS_OUTPUTS, 'prefix'])('the output %s has a row', (name) => {
    expect(outputs.has(name)).toBe(true);
    expect(resource.properties).toHaveProperty(name);
  });

  it('marks secret exactly the outputs the schema marks secret', () => {
    for (const [name, row] of outputs) {
      const secret = (resource.properties as Record<string, { secret?: boolean }>)[name]?.secret === true;
      expect([name, row.join(' ').includes('secret output')]).toEqual([name, secret]);
    }
  });
});
