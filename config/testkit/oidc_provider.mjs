// A real authorization server for the OAuth tests: oidc-provider (OpenID Certified),
// with client credentials, resource indicators (RFC 8707) and JWT access tokens
// (RFC 9068). Usage: node oidc_provider.mjs <port> <resource>; prints "ready <issuer>".
//
// Besides the provider's own endpoints, on the same port:
//   GET /test/token?client=<id>[&resource=<url>][&scope=<s>]  a token from the provider
//   GET /test/forge?kind=<kind>&resource=<url>                a token the provider would
//       never issue: none, hs256 (HMAC keyed with the public key), tampered, expired,
//       unknown-kid (signed by a key the JWKS does not publish)
//   GET /test/rotate                                          new signing keys, new kids
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const base = process.env.NODE_PATH;
const load = (rel) => import(pathToFileURL(join(base, rel)).href);
const { default: Provider } = await load('oidc-provider/lib/index.js');
const jose = await load('jose/dist/webapi/index.js');

const port = Number(process.argv[2]);
const resource = process.argv[3];
const issuer = `http://127.0.0.1:${port}`;
const SCOPE = 'mcp:answer';

// Clients by the algorithm their tokens are signed with; one without the scope.
const clients = [
  ['rs-client', 'RS256', SCOPE],
  ['ps-client', 'PS256', SCOPE],
  ['es-client', 'ES256', SCOPE],
  ['ed-client', 'EdDSA', SCOPE],
  ['noscope-client', 'RS256', 'other'],
  // An identity far longer than a client name (Auth0's `sub:provider|…`, an email):
  // `sub:` and this id make 200 bytes.
  [`long-client-${'x'.repeat(184)}`, 'RS256', SCOPE],
].map(([client_id, token_alg, scope]) => ({
  client_id,
  client_secret: `secret-${client_id}`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  token_endpoint_auth_method: 'client_secret_basic',
  scope,
  token_alg,
}));

let generation = 0;
let keys; // the private JWKs of the current generation

async function newKeys() {
  generation += 1;
  const make = async (alg, opts) => {
    const { privateKey } = await jose.generateKeyPair(alg, { extractable: true, ...opts });
    const jwk = await jose.exportJWK(privateKey);
    jwk.kid = `${alg.toLowerCase()}-${generation}`;
    jwk.use = 'sig';
    return jwk;
  };
  // The RSA key carries no alg: it signs RS256 and PS256 alike.
  return [await make('RS256'), await make('ES256'), await make('EdDSA', { crv: 'Ed25519' })];
}

function provider() {
  const p = new Provider(issuer, {
    clients,
    jwks: { keys },
    extraClientMetadata: { properties: ['token_alg'] },
    scopes: [SCOPE, 'other'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      registration: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator, client) => ({
          scope: `${SCOPE} other`,
          audience: indicator,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 300,
          jwt: { sign: { alg: client.token_alg } },
        }),
      },
    },
  });
  p.proxy = true;
  return p;
}

keys = await newKeys();
let current = provider();

async function token(client, res, scope) {
  const form = new URLSearchParams({ grant_type: 'client_credentials', resource: res });
  if (scope) form.set('scope', scope);
  const auth = Buffer.from(`${client}:secret-${client}`).toString('base64');
  const r = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${auth}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  const body = await r.json();
  if (!body.access_token) throw new Error(JSON.stringify(body));
  return body.access_token;
}

const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

async function forge(kind, res) {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: issuer, aud: res, sub: 'mallory', client_id: 'rs-client', scope: SCOPE, iat: now, exp: now + 300, jti: `j${now}` };
  const rsa = keys[0];
  switch (kind) {
    case 'none':
      return `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims)}.`;
    case 'hs256': {
      // The classic confusion: an HMAC keyed with the public key's text.
      const publicPem = await jose.exportSPKI(await jose.importJWK({ kty: rsa.kty, n: rsa.n, e: rsa.e }, 'RS256', { extractable: true }));
      const secret = new TextEncoder().encode(publicPem);
      return new jose.SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: rsa.kid, typ: 'at+jwt' }).sign(secret);
    }
    case 'tampered': {
      const real = await token('rs-client', res, SCOPE);
      const [h, p, s] = real.split('.');
      const payload = JSON.parse(Buffer.from(p, 'base64url'));
      payload.sub = 'someone-else';
      return `${h}.${b64(payload)}.${s}`;
    }
    case 'expired': {
      const key = await jose.importJWK(rsa, 'RS256');
      return new jose.SignJWT({ ...claims, iat: now - 7200, exp: now - 3600 }).setProtectedHeader({ alg: 'RS256', kid: rsa.kid, typ: 'at+jwt' }).sign(key);
    }
    case 'unknown-kid': {
      const { privateKey } = await jose.generateKeyPair('RS256');
      return new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'never-published', typ: 'at+jwt' }).sign(privateKey);
    }
    default:
      throw new Error(`no such forgery: ${kind}`);
  }
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, issuer);
  if (!url.pathname.startsWith('/test/')) {
    return current.callback()(req, res);
  }
  try {
    let text;
    if (url.pathname === '/test/token') {
      text = await token(url.searchParams.get('client'), url.searchParams.get('resource') || resource, url.searchParams.get('scope') || undefined);
    } else if (url.pathname === '/test/forge') {
      text = await forge(url.searchParams.get('kind'), url.searchParams.get('resource') || resource);
    } else if (url.pathname === '/test/rotate') {
      keys = await newKeys();
      current = provider();
      text = keys.map((k) => k.kid).join(' ');
    } else {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
  } catch (e) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(String(e && e.message));
  }
});
server.listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`));
