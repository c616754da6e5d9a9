/**
 * The Pulumi resource's reference, from the provider plugin's schema (src/pulumi/plugin/schema.ts), which every SDK is
 * generated from and the dynamic resource shares: every input (the fields of its object types too) with its type,
 * default and description, and every output the status gives, marked where the schema makes it a secret.
 */
import { APPLICATION_CREDENTIAL, packageSchema } from '../../src/pulumi/plugin/schema';
import { STATUS_OUTPUTS } from '../../src/pulumi/state';
import { code, table } from './markdown';

/** A schema property, as far as the reference reads it. */
interface Property {
  readonly type?: string;
  readonly $ref?: string;
  readonly items?: Property;
  readonly description?: string;
  readonly default?: unknown;
  readonly secret?: boolean;
}

interface ObjectType {
  readonly properties: Readonly<Record<string, Property>>;
  readonly required?: readonly string[];
}

const schema = () => packageSchema('0.0.0') as unknown as { resources: Record<string, { inputProperties: Record<string, Property>; properties: Record<string, Property>; requiredInputs?: string[] }>; types: Record<string, ObjectType> };

/** The object type a property refers to (itself, or its items'), if any. */
const typeName = (property: Property): string | undefined => (property.$ref ?? property.items?.$ref)?.replace('#/types/', '');

/** A property's type as the reference shows it: `string`, `integer`, `object`, `[]string`, `[]object`. */
const typeOf = (property: Property): string => (property.type === 'array' ? `[]${property.items ? typeOf(property.items) : 'any'}` : property.$ref ? 'object' : (property.type ?? 'any'));

/** Every input, an object input's fields after it (`rotation.interval`, `accessRules[].path`). */
export function pulumiInputs(): string {
  const { resources, types } = schema();
  const rows: string[][] = [];
  const add = (path: string, property: Property, required: boolean) => {
    rows.push([code(path), `${typeOf(property)}${required ? ', required' : ''}${property.secret ? ', secret' : ''}`, property.default === undefined ? '' : code(String(property.default)), property.description ?? '']);
    const nested = typeName(property);
    if (!nested) return;
    const type = types[nested];
    const prefix = property.type === 'array' ? `${path}[]` : path;
    for (const [name, field] of Object.entries(type.properties)) add(`${prefix}.${name}`, field, (type.required ?? []).includes(name));
  };
  const resource = resources[APPLICATION_CREDENTIAL];
  for (const [name, property] of Object.entries(resource.inputProperties)) add(name, property, (resource.requiredInputs ?? []).includes(name));
  return table(['input', 'type', 'default', 'description'], rows);
}

/** Every output the status gives, and the prefix; a secret output says so. */
export function pulumiOutputs(): string {
  const resource = schema().resources[APPLICATION_CREDENTIAL];
  return table(
    ['output', 'type', 'description'],
    [...STATUS_OUTPUTS, 'prefix'].map((name) => {
      const property = resource.properties[name];
      if (!property) throw new Error(`the schema has no output ${name}`);
      return [code(name), `${typeOf(property)}${property.secret ? ', **secret output**' : ''}`, property.description ?? ''];
    }),
  );
}
