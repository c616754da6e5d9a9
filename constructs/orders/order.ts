/**
 * What the typed orders share: metadata props, the synth-time validation hook, and the conversion of a
 * {@link DurationInput} to the string the CRD stores.
 */
import { ApiObject, type ApiObjectMetadata } from 'cdk8s';
import { Construct } from 'constructs';
import { toDuration, type DurationInput } from '../../src/api/duration';
import type { Violation } from '../../src/api/validation';
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

/** The `controlPlaneRef` as emitted: only the given halves, so a left-out namespace means the order's own. */
export function emittedControlPlaneRef(ref: ControlPlaneReference): ControlPlaneRef {
  return defined({ name: ref.name, namespace: ref.namespace });
}

/** A reference to another order in the same namespace. */
export interface OrderReference {
  /** The referenced order's name (1 to 63 characters). Immutable once applied. */
  readonly name: string;
}

/**
 * A duration as the CRD stores it: a string as written (after the rules check it), a Duration value in Go's canonical
 * form (`720h0m0s`), as a Go client writes it.
 */
export function durationString(input: DurationInput | undefined): string | undefined {
  if (input === undefined) return undefined;
  return typeof input === 'string' ? input : toDuration(input, 'duration').toString();
}

/** Drops undefined members, so an absent optional field is left to the API server's schema default. */
export function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The base of every typed order: an ApiObject of group c5c3.io whose spec is checked against the CRD's rules at synth. */
export abstract class Order<Spec extends object> extends Construct {
  /** The emitted object. */
  readonly apiObject: ApiObject;
  /** The object's name. */
  readonly name: string;
  /** The object's namespace, if set on it or its chart. */
  readonly namespace: string | undefined;
  /** The spec as emitted. */
  readonly spec: Spec;

  protected constructor(scope: Construct, id: string, kind: string, spec: Spec, props: OrderProps) {
    super(scope, id);
    this.spec = spec;
    this.apiObject = new ApiObject(this, 'Resource', { apiVersion: API_VERSION, kind, metadata: props.metadata, spec });
    this.name = this.apiObject.name;
    this.namespace = this.apiObject.metadata.namespace;
    this.node.addValidation({ validate: () => this.violations().map((v) => `${kind} ${this.name}: ${v.message}`) });
  }

  /** Every violation of the kind's CRD schema and rules by the object as emitted. */
  protected abstract violations(): readonly Violation[];
}
