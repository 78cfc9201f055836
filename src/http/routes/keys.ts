/** POST /generate-api-keys: an account on first use, a new key for a known email and password. */
import { PLANS, WrongPasswordError } from '../../store/apikeys.ts';
import { emailParam, ipParam, passwordParam } from '../params.ts';
import { defineRoute, HttpError, json, routeGroup } from '../route.ts';
import { ApiKeyIssued } from '../schemas.ts';

export default routeGroup('keys', [
  defineRoute({
    method: 'POST',
    url: '/generate-api-keys',
    operationId: 'generateApiKeys',
    summary: 'Get an API key',
    description:
      'Creates the account on the first request for an email, or issues one more key for a known email with the right ' +
      'password. The key is shown once and stored only as a hash: keep it. Passwords are hashed with scrypt. ' +
      `New accounts get the ${PLANS.developer.name} plan (premium endpoints included).`,
    tags: ['Utility'],
    apiKey: false,
    query: { ip: ipParam, email: emailParam, password: passwordParam },
    response: ApiKeyIssued,
    errors: { 401: 'Wrong password for this email.' },
    handler: async ({ core, query }) => {
      try {
        const issued = await core.keys.issue({ email: query.email, password: query.password, ip: query.ip });
        return json({
          api_key: issued.key,
          keyId: issued.keyId,
          email: issued.email,
          plan: issued.plan.name,
          premium: issued.plan.premium,
          rateLimit: { requests: core.config.RATE_LIMIT_KEY, windowSeconds: 60 },
          accountCreated: issued.accountCreated,
          createdAt: new Date(issued.createdAt).toISOString(),
        });
      } catch (e) {
        if (e instanceof WrongPasswordError) throw new HttpError(401, 'Wrong password for this email.');
        throw e;
      }
    },
  }),
]);
