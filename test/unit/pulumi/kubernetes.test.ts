/**
 * The Kubernetes side of the Pulumi face, with Pulumi's mocks (`pulumi.runtime.setMocks`): no Kubernetes provider
 * plugin and no API server run here (the test environment builds neither the plugin nor a way to fetch it), so these
 * tests prove the resources the program registers and their inputs, not their effect on a cluster.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { parseAllDocuments } from 'yaml';
import { deployToKubernetes } from '../../../examples/pulumi/kubernetes';
import { CredentialSecret } from '../../../src/pulumi/kubernetes';
import { synthesizeManifests } from '../../support/synth';

interface Registered {
  readonly type: string;
  readonly name: string;
  readonly inputs: Record<string, unknown>;
}

const registered: Registered[] = [];
/** The key and value of Pulumi's secret envelope on the wire. */
const SECRET_SIG = '4dabf18193072939515e22adb298388d';

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.push({ type: args.type, name: args.name, inputs: args.inputs as Record<string, unknown> });
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call: (args) => {
        if (args.token === 'kubernetes:yaml:decode') {
          const text = (args.inputs as { text: string }).text;
          return { result: parseAllDocuments(text).map((d) => d.toJSON() as unknown).filter((o) => o !== null) };
        }
        return {};
      },
    },
    'kac-mocks',
    'test',
    false,
  );
});

/** Resolves an Output in a mocked program. */
function value<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}

async function settle(): Promise<void> {
  await new Promise((r) => setTimeout(r, 200));
}

const credential = {
  credentialId: pulumi.output('cred-7'),
  credentialSecret: pulumi.secret('s3cret'),
  cloudsYaml: pulumi.secret('clouds:\n  openstack:\n    auth_type: v3applicationcredential\n'),
};

describe('CredentialSecret', () => {
  it('writes a Secret with the spec keys, the spec labels and the delivered name, secret data kept secret', async () => {
    const component = new CredentialSecret('app', { credential, namespace: 'tenant-a' });
    expect(await value(component.secretName)).toBe('app-credentials');
    await settle();
    const secret = registered.find((r) => r.type === 'kubernetes:core/v1:Secret' && r.name === 'app');
    expect(secret).toBeDefined();
    const inputs = secret?.inputs as { metadata: { name: string; namespace: string; labels: Record<string, string> }; stringData: unknown };
    // The mock monitor sees secret values wrapped in Pulumi's secret envelope: the whole stringData is secret.
    const envelope = inputs.stringData as Record<string, unknown>;
    expect(envelope[SECRET_SIG]).toBe('1b47061264138c4ac30d75fd1eb44270');
    const stringData = envelope.value as Record<string, string>;
    expect(inputs.metadata).toEqual({
      name: 'app-credentials',
      namespace: 'tenant-a',
      labels: { 'c5c3.io/keystoneapplicationcredential-name': 'app', 'c5c3.io/keystoneapplicationcredential-namespace': 'tenant-a' },
    });
    expect(Object.keys(stringData).sort()).toEqual(['application_credential_id', 'application_credential_secret', 'clouds.yaml']);
    expect(stringData.application_credential_id).toBe('cred-7');
    expect(stringData.application_credential_secret).toBe('s3cret');
    expect(component.secretKeys).toEqual(['clouds.yaml', 'application_credential_id', 'application_credential_secret']);
    expect(await pulumi.isSecret(component.secret.stringData)).toBe(true);
  });
});

describe('the Kubernetes example', () => {
  it('deploys the synthesized CRDs and operator, an order, and the credential as a Secret', async () => {
    const dist = synthesizeManifests();
    const deployment = deployToKubernetes(credential, { distDir: dist, namespace: 'tenant-b' });
    await value(deployment.crds.resources);
    await value(deployment.operator.resources);
    await settle();
    const kinds = (prefix: string) => registered.filter((r) => r.type.startsWith(prefix)).map((r) => r.name);
    expect(kinds('kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition')).toEqual(
      expect.arrayContaining(['keystoneapplicationcredentials.c5c3.io', 'keystoneusers.c5c3.io', 'keystoneprojects.c5c3.io']),
    );
    expect(kinds('kubernetes:apps/v1:Deployment')).toEqual(expect.arrayContaining([expect.stringContaining('keystone-appcred-operator')]));
    const crdCount = parseAllDocuments(readFileSync(join(dist, '0000-crds.k8s.yaml'), 'utf8')).filter((d) => (d.toJSON() as { kind?: string }).kind === 'CustomResourceDefinition').length;
    expect(kinds('kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition').length).toBeGreaterThanOrEqual(crdCount);
    const order = registered.find((r) => r.type === 'kubernetes:c5c3.io/v1alpha1:KeystoneApplicationCredential');
    expect(order?.inputs).toMatchObject({
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'KeystoneApplicationCredential',
      metadata: { name: 'workflow-appcred', namespace: 'tenant-b' },
      spec: { userRef: { name: 'workflow' }, projectRef: { name: 'workflow-project' } },
    });
    expect(await value(deployment.delivered.secretName)).toBe('ci-credentials');
  });
});
