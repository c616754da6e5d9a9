/**
 * Roles (`/v3/roles`) and project role assignments of users, managed with an admin session (testbed, demo, tests).
 */
import { isKeystoneError } from './errors';
import { Reply } from './reply';
import type { KeystoneSession } from './session';

/** A Keystone role. */
export interface Role {
  readonly id: string;
  readonly name: string;
}

/** A user's role on a project. */
export interface ProjectRoleAssignment {
  readonly userId: string;
  readonly projectId: string;
  readonly roleId: string;
}

/** Outcome of a revoke: both mean the user no longer holds the role directly. */
export type RevokeOutcome = 'revoked' | 'already-gone';

/** Finds roles and grants, checks and revokes users' roles on projects (admin session). */
export class Roles {
  constructor(private readonly session: KeystoneSession) {}

  /** The global role with this exact name (e.g. `member`), or `undefined`. */
  async findByName(name: string): Promise<Role | undefined> {
    const path = this.session.transport.pathOf('roles');
    const response = await this.session.request({ method: 'GET', path: `${path}?name=${encodeURIComponent(name)}` });
    return Reply.list({ method: 'GET', path }, response.body, 'roles')
      .map((role) => ({ id: role.string('id'), name: role.string('name') }))
      .find((role) => role.name === name);
  }

  /** Grants the role (idempotent: granting a held role succeeds). */
  async grantOnProject(assignment: ProjectRoleAssignment): Promise<void> {
    await this.session.request({ method: 'PUT', path: this.assignmentPath(assignment) });
  }

  /** Whether the user holds the role on the project directly. */
  async hasOnProject(assignment: ProjectRoleAssignment): Promise<boolean> {
    try {
      await this.session.request({ method: 'HEAD', path: this.assignmentPath(assignment) });
      return true;
    } catch (error) {
      if (isKeystoneError(error, 'not-found')) return false;
      throw error;
    }
  }

  /** Revokes the role; an assignment that does not exist counts as `already-gone`. */
  async revokeOnProject(assignment: ProjectRoleAssignment): Promise<RevokeOutcome> {
    try {
      await this.session.request({ method: 'DELETE', path: this.assignmentPath(assignment) });
      return 'revoked';
    } catch (error) {
      if (isKeystoneError(error, 'not-found')) return 'already-gone';
      throw error;
    }
  }

  private assignmentPath({ userId, projectId, roleId }: ProjectRoleAssignment): string {
    const e = encodeURIComponent;
    return this.session.transport.pathOf(`projects/${e(projectId)}/users/${e(userId)}/roles/${e(roleId)}`);
  }
}
