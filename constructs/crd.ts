/**
 * The CustomResourceDefinition construct every kind of this project is emitted with: namespaced unless the definition
 * says `Cluster`, one served and stored version `c5c3.io/v1alpha1`, a status subresource, printer columns, and a
 * structural schema whose CEL rules come from `src/api`.
 */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { GROUP, VERSION } from '../src/api/types';
import type { KindDefinition } from './definitions/definition';
import { ALL_KINDS } from './definitions/kinds';
import { kubeObject } from './kube';
import { object, toJsonSchemaProps, withRules, type Schema } from './schema';

/** `<plural>.c5c3.io`, the CRD's name. */
export function crdName(definition: Pick<KindDefinition, 'plural'>): string {
  return `${definition.plural}.${GROUP}`;
}

/** The full openAPIV3Schema of a kind, rules placed. */
export function kindSchema(definition: KindDefinition): Schema {
  const root = object(
    definition.description,
    {
      apiVersion: { type: 'string', description: 'The versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'The REST resource this object represents.' },
      metadata: { type: 'object' },
      spec: definition.spec,
      status: definition.status,
    },
    ['spec'],
  );
  return withRules(root, definition.rules);
}

/** The kinds of group `c5c3.io`, version `v1alpha1`. */
export enum Kind {
  /** ControlPlane: which Keystone, with what admin credential, for which namespaces. */
  CONTROL_PLANE = 'ControlPlane',
  /** KeystoneProject: a project in the ControlPlane's domain. */
  KEYSTONE_PROJECT = 'KeystoneProject',
  /** KeystoneUser: a user whose password is delivered as a Secret. */
  KEYSTONE_USER = 'KeystoneUser',
  /** KeystoneRoleAssignment: a role for an ordered user on an ordered project. */
  KEYSTONE_ROLE_ASSIGNMENT = 'KeystoneRoleAssignment',
  /** KeystoneApplicationCredential: an application credential, rotated and delivered as a Secret. */
  KEYSTONE_APPLICATION_CREDENTIAL = 'KeystoneApplicationCredential',
  /** KeystoneClusterIdentity (cluster-scoped): an admin credentials Secret shared with allowed namespaces. */
  KEYSTONE_CLUSTER_IDENTITY = 'KeystoneClusterIdentity',
}

/** The definition of `kind`; throws for a name that is no kind of the project (a JavaScript caller's string). */
export function definitionOf(kind: Kind): KindDefinition {
  const found = ALL_KINDS.find((d) => d.kind === kind);
  if (!found) throw new Error(`kind (${JSON.stringify(kind)}) must be one of ${ALL_KINDS.map((d) => d.kind).join(', ')}`);
  return found;
}

/** Props of {@link CustomResourceDefinition}. */
export interface CustomResourceDefinitionProps {
  /** The kind to define. */
  readonly kind: Kind;
}

/** A CRD of one of this project's kinds. */
export class CustomResourceDefinition extends Construct {
  /** The emitted object (`apiextensions.k8s.io/v1` CustomResourceDefinition). */
  public readonly apiObject: ApiObject;
  /** The CRD's name, `<plural>.c5c3.io`. */
  public readonly name: string;
  /** The kind it defines. */
  public readonly kind: Kind;

  public constructor(scope: Construct, id: string, props: CustomResourceDefinitionProps) {
    super(scope, id);
    const d = definitionOf(props.kind);
    this.kind = props.kind;
    this.name = crdName(d);
    this.apiObject = kubeObject(this, 'Resource', 'CustomResourceDefinition', {
      metadata: { name: this.name },
      spec: {
        group: GROUP,
        scope: d.scope ?? 'Namespaced',
        names: {
          kind: d.kind,
          listKind: d.listKind,
          plural: d.plural,
          singular: d.singular,
          shortNames: d.shortNames,
          categories: ['c5c3'],
        },
        versions: [
          {
            name: VERSION,
            served: true,
            storage: true,
            subresources: { status: {} },
            additionalPrinterColumns: d.columns,
            schema: { openAPIV3Schema: toJsonSchemaProps(kindSchema(d)) },
          },
        ],
      },
    });
  }
}
