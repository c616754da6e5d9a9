/**
 * What the typed orders share: their metadata props, the references they take, and `emitOrder`, which emits an order's
 * ApiObject and hangs the synth-time check of its kind's CRD rules on the construct.
 *
 * The orders hold this by composition rather than by a generic base class: jsii carries no generics, and a base whose
 * protected members return the engine's types (`Violation`, the specs of src/api) would put those types into every
 * language's API. Each order is a plain `Construct` whose public members are its object, its name, its namespace and
 * its references.
 */
import { ApiObject, type ApiObjectMetadata } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Violation } from '../../src/api/field-rules';
import { API_VERSION, type ControlPlaneRef } from '../../src/api/types';

/** Props every typed order takes. */
export interface OrderProps {
  /**
   * The object's metadata. Give `name` for a stable name users and references read; the name is at most 63 bytes.
   * @default a name cdk8s derives from the construct path, and the chart's namespace
   */
  readonly metadata?: ApiObjectMetadata;
}

/** A reference to a ControlPlane, as every order's `spec.controlPlaneRef` carries it. */
export interface ControlPlaneReference {
  /** The ControlPlane's name (1 to 63 characters). Immutable once applied. */
  readonly name: string;
  /**
   * The ControlPlane's namespace: a DNS label. Immutable once applied, also when it was left out: writing it out later,
   * even as the order's own namespace, is refused as a change.
   * @default the order's own namespace (left out of the manifest)
   */
  readonly namespace?: string;
}

/** A reference to another order in the same namespace. */
export interface OrderReference {
  /** The referenced order's name (1 to 63 characters). Immutable once applied. */
  readonly name: string;
}

/** The `controlPlaneRef` as emitted: only the given halves, so a left-out namespace means the order's own. */
export function emittedControlPlaneRef(ref: ControlPlaneReference): ControlPlaneRef {
  return defined({ name: ref.name, namespace: ref.namespace });
}

/** Drops undefined members, so an absent optional field is left to the API server's schema default. */
export function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** An emitted order: its object, name and namespace. */
export interface EmittedOrder {
  readonly apiObject: ApiObject;
  readonly name: string;
  readonly namespace: string | undefined;
}

/**
 * Emits an order of group c5c3.io under `scope` (as its child `Resource`) and adds a validation that fails the synth
 * with every violation of the kind's CRD schema and rules, read by `violations` from the object's name and spec when
 * the app synthesizes: `<Kind> <name>: <field> (<value>): <rule>`.
 */
export function emitOrder<Spec extends object>(
  scope: Construct,
  kind: string,
  spec: Spec,
  props: OrderProps,
  violations: (object: { readonly metadata: { readonly name: string }; readonly spec: Spec }) => readonly Violation[],
): EmittedOrder {
  const apiObject = new ApiObject(scope, 'Resource', { apiVersion: API_VERSION, kind, metadata: props.metadata, spec });
  const name = apiObject.name;
  scope.node.addValidation({ validate: () => violations({ metadata: { name }, spec }).map((v) => `${kind} ${name}: ${v.message}`) });
  return { apiObject, name, namespace: apiObject.metadata.namespace };
}
