/**
 * Holds on deletion (identity-plane.md, Shared behaviour; spec, Deletion Semantics), one test per rule.
 */
import { holdOnAssignment, holdOnProject, holdOnUser } from '../../../src/plane';
import { assignment, credential, project, user } from './fakes';

describe('holds', () => {
  it('ReferencedByApplicationCredentials: a credential holds its user, its project and every assignment of that user and project', () => {
    const world = { assignments: [], credentials: [credential('app')] };
    expect(holdOnUser(user(), world)).toMatchObject({ reason: 'ReferencedByApplicationCredentials', message: expect.stringContaining('KeystoneApplicationCredential app') });
    expect(holdOnProject(project(), world)).toMatchObject({ reason: 'ReferencedByApplicationCredentials' });
    expect(holdOnAssignment(assignment(), world)).toMatchObject({ reason: 'ReferencedByApplicationCredentials' });
    expect(holdOnAssignment(assignment('x', { projectRef: { name: 'other' } }), world)).toBeUndefined();
  });

  it('ReferencedByRoleAssignments: an assignment holds its user and its project', () => {
    const world = { assignments: [assignment()], credentials: [] };
    expect(holdOnUser(user(), world)).toMatchObject({ reason: 'ReferencedByRoleAssignments', message: expect.stringContaining('KeystoneRoleAssignment alice-member') });
    expect(holdOnProject(project(), world)).toMatchObject({ reason: 'ReferencedByRoleAssignments' });
    expect(holdOnUser(user('bob'), world)).toBeUndefined();
  });

  it('a credential is reported before an assignment: it must be deleted first', () => {
    expect(holdOnUser(user(), { assignments: [assignment()], credentials: [credential()] })?.reason).toBe('ReferencedByApplicationCredentials');
  });

  it('an order being deleted still holds until it is gone; an order of another namespace never holds', () => {
    const deleting = { ...credential(), metadata: { ...credential().metadata, deletionTimestamp: '2026-12-01T00:00:00Z' } };
    expect(holdOnUser(user(), { assignments: [], credentials: [deleting] })).toBeDefined();
    const elsewhere = { ...credential(), metadata: { ...credential().metadata, namespace: 'tenant-b' } };
    expect(holdOnUser(user(), { assignments: [], credentials: [elsewhere] })).toBeUndefined();
  });
});
