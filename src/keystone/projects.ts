/**
 * Projects (`/v3/projects`), managed with an admin session (testbed, demo, tests).
 */
import { isKeystoneError } from './errors';
import { Reply } from './reply';
import type { KeystoneSession } from './session';
import { deleteResource, type DeleteOutcome } from './delete';

/** A Keystone project. */
export interface Project {
  readonly id: string;
  readonly name: string;
  readonly domainId: string;
  readonly description?: string;
  readonly enabled: boolean;
  readonly tags: readonly string[];
}

/** What {@link Projects.create} needs. */
export interface ProjectInput {
  readonly name: string;
  /** @default "default" */
  readonly domainId?: string;
  readonly description?: string;
  /** Tags, e.g. to mark test projects for sweeping. @default none */
  readonly tags?: readonly string[];
}

/** Creates, finds and deletes projects (admin session). */
export class Projects {
  constructor(private readonly session: KeystoneSession) {}

  /** Creates an enabled project. Throws `conflict` when the domain already has a project with that name. */
  async create(input: ProjectInput): Promise<Project> {
    const project: Record<string, unknown> = {
      name: input.name,
      domain_id: input.domainId ?? 'default',
      enabled: true,
    };
    if (input.description !== undefined) project.description = input.description;
    if (input.tags !== undefined) project.tags = [...input.tags];
    const path = this.session.transport.pathOf('projects');
    const response = await this.session.request({ method: 'POST', path, body: { project } });
    return projectOf(Reply.of({ method: 'POST', path }, response.body, 'project'));
  }

  /** The project with this id, or `undefined`. */
  async get(id: string): Promise<Project | undefined> {
    const path = this.session.transport.pathOf(`projects/${encodeURIComponent(id)}`);
    try {
      const response = await this.session.request({ method: 'GET', path });
      return projectOf(Reply.of({ method: 'GET', path }, response.body, 'project'));
    } catch (error) {
      if (isKeystoneError(error, 'not-found')) return undefined;
      throw error;
    }
  }

  /** The project with this exact name in the domain, or `undefined`. */
  async findByName(name: string, domainId = 'default'): Promise<Project | undefined> {
    const path = this.session.transport.pathOf('projects');
    const query = `?name=${encodeURIComponent(name)}&domain_id=${encodeURIComponent(domainId)}`;
    const response = await this.session.request({ method: 'GET', path: `${path}${query}` });
    return Reply.list({ method: 'GET', path }, response.body, 'projects')
      .map(projectOf)
      .find((project) => project.name === name);
  }

  /** Deletes a project; a missing project counts as `already-gone`. */
  async delete(id: string): Promise<DeleteOutcome> {
    return deleteResource(this.session, `projects/${encodeURIComponent(id)}`);
  }
}

function projectOf(reply: Reply): Project {
  return {
    id: reply.string('id'),
    name: reply.string('name'),
    domainId: reply.string('domain_id'),
    description: reply.optionalString('description') || undefined,
    enabled: reply.optionalBoolean('enabled') ?? true,
    tags: reply.strings('tags'),
  };
}
