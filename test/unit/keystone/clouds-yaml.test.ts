import { parse } from 'yaml';
import { renderCloudsYaml } from '../../../src/keystone';

describe('renderCloudsYaml', () => {
  test('renders a v3applicationcredential cloud named "openstack" by default, without a CA bundle', () => {
    const text = renderCloudsYaml({
      authUrl: 'https://keystone.example.com/v3',
      applicationCredentialId: 'a1b2',
      applicationCredentialSecret: 'the-secret',
    });
    expect(parse(text)).toEqual({
      clouds: {
        openstack: {
          auth_type: 'v3applicationcredential',
          auth: {
            auth_url: 'https://keystone.example.com/v3',
            application_credential_id: 'a1b2',
            application_credential_secret: 'the-secret',
          },
          identity_api_version: 3,
        },
      },
    });
    expect(text).not.toMatch(/cacert|ca_cert|verify/);
  });

  test('carries region and interface when given, and round-trips secrets YAML would misread', () => {
    for (const secret of ['yes', '123', '- a: b', "it's #1", '0x1F', 'null', ' padded ']) {
      const text = renderCloudsYaml({
        cloudName: 'mine',
        authUrl: 'http://127.0.0.1:5000/v3',
        applicationCredentialId: '42',
        applicationCredentialSecret: secret,
        regionName: 'RegionOne',
        interface: 'internal',
      });
      const cloud = (parse(text) as { clouds: Record<string, Record<string, unknown>> }).clouds.mine;
      expect(cloud.region_name).toBe('RegionOne');
      expect(cloud.interface).toBe('internal');
      expect(cloud.auth).toMatchObject({ application_credential_id: '42', application_credential_secret: secret });
    }
  });

  test('rejects empty fields by name', () => {
    expect(() =>
      renderCloudsYaml({ authUrl: 'http://x/v3', applicationCredentialId: 'id', applicationCredentialSecret: '' }),
    ).toThrow('applicationCredentialSecret must not be empty');
  });
});
