/**
 * The real components the test suite can start. Each starter brings one component up on 127.0.0.1 with free ports and
 * a temp dir, and returns the environment variables the tests read to reach it plus a stop function. Starters live in
 * their own files (keystone.ts, kube.ts, openbao.ts, pulumi.ts) and are loaded lazily, so a run that needs only Keystone
 * never touches the Go toolchain.
 */
export type Component = 'keystone' | 'kube' | 'openbao' | 'pulumi';

export const COMPONENTS: readonly Component[] = ['keystone', 'kube', 'openbao', 'pulumi'];

/** A started component. */
export interface Started {
  /** Variables the tests read to reach the component (merged into the workers' environment). */
  readonly env: Record<string, string>;
  /** Log files whose tail is worth printing when a test fails. */
  readonly logs: readonly string[];
  /** Stops the component and removes what it wrote; safe to call twice. */
  stop(): Promise<void>;
}

export type Starter = (workDir: string) => Promise<Started>;

export async function starterFor(component: Component): Promise<Starter> {
  switch (component) {
    case 'keystone':
      return (await import('./keystone')).startKeystone;
    case 'kube':
      return (await import('./kube')).startKube;
    case 'openbao':
      return (await import('./openbao')).startOpenBao;
    case 'pulumi':
      return (await import('./pulumi')).preparePulumi;
  }
}
