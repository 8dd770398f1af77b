import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import type { Authorizer } from '../../../core/http/access.js';
import { bootKernel, tempDir } from '../../helpers/kernel.js';
import { writeProtocolPlugin } from '../../helpers/plugins.js';

t.test('non-public routes are refused until an authorizer allows them', async (t) => {
  const plugins = tempDir(t);
  writeProtocolPlugin(
    plugins,
    'configuration',
    `scope.route({ method: 'GET', url: '/fixture/guarded', config: { access: { permission: 'configuration:read' } }, handler: async () => ({ secret: 'data' }) });`,
  );
  const kernel = await bootKernel(t, { plugins: { paths: [plugins] } });
  const get = () => kernel.app.inject({ url: '/fixture/guarded', headers: { host: 'localhost' } });

  const denied = await get();
  t.equal(denied.statusCode, 401, 'fail closed: no authorizer yet, so 401');
  t.equal(denied.headers['content-type'], 'application/problem+json');
  t.match(denied.json(), { error: 'SEC-AUTH-001', status: 401 });
  t.notMatch(denied.body, /data/);

  const seen: unknown[] = [];
  const setAuthorizer = kernel.container.resolve<(a: Authorizer) => void>('setAuthorizer');
  setAuthorizer({
    authorize: async (request, access) => {
      seen.push(access);
      if (request.headers['x-api-id'] !== 'administrator') throw new ProblemError('SEC-PERM-001');
    },
  });
  const forbidden = await get();
  t.equal(forbidden.statusCode, 403);
  t.match(forbidden.json(), { error: 'SEC-PERM-001' });
  const allowed = await kernel.app.inject({ url: '/fixture/guarded', headers: { host: 'localhost', 'x-api-id': 'administrator' } });
  t.equal(allowed.statusCode, 200);
  t.same(seen[0], { permission: 'configuration:read' }, 'the authorizer sees the route declaration');

  // The host gate still comes first: a wrong host is a 404, whatever the credentials.
  const wrongHost = await kernel.app.inject({ url: '/fixture/guarded', headers: { host: 'evil.example', 'x-api-id': 'administrator' } });
  t.equal(wrongHost.statusCode, 404);
});
