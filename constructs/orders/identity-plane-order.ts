/**
 * The base of the typed neighbour orders: validated at synth with `validatePlane` from `src/api`.
 */
import type { PlaneKind } from '../../src/api/identity-plane';
import { validatePlane } from '../../src/api/identity-plane-rules';
import type { Violation } from '../../src/api/validation';
import { Order } from './order';

/** An order of one of the four neighbour kinds. */
export abstract class PlaneOrder<Spec extends object> extends Order<Spec> {
  /** The kind. */
  protected abstract readonly planeKind: PlaneKind;

  protected violations(): readonly Violation[] {
    return validatePlane(this.planeKind, { metadata: { name: this.name }, spec: this.spec });
  }
}
