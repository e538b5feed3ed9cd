import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rm, writeFile, mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'ldapts';
import { ownedTempDir, recordProcess, waitFor } from '@pack/testkit';

/** Where Debian's slapd package puts the server, its modules and its schemas. */
const SLAPD = process.env.SLAPD_BIN ?? '/usr/sbin/slapd';
const MODULES = '/usr/lib/ldap';
const SCHEMAS = '/etc/ldap/schema';

export const SUFFIX = 'dc=example,dc=com';
export const ROOT_DN = `cn=root,${SUFFIX}`;

/** A port nobody listens on right now (the server is given it a moment later). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Slapd {
  uri: string;
  /** ldaps:// on a second port, with a self-signed certificate no client trusts. */
  tlsUri: string;
  /** A client bound as the root DN, to change the directory during a test. */
  admin(): Promise<Client>;
  stop(): Promise<void>;
}

/**
 * A real OpenLDAP server of our own: generated configuration and database under a temporary
 * directory, on a free loopback port, independent of any system slapd. Passwords are stored in
 * clear (a test directory); authenticated users may read, anonymous ones may only bind.
 */
export async function startSlapd(rootPassword: string): Promise<Slapd> {
  const dir = ownedTempDir('slapd');
  await mkdir(path.join(dir, 'data'));
  const port = await freePort();
  const uri = `ldap://127.0.0.1:${port}`;
  const tlsUri = `ldaps://127.0.0.1:${await freePort()}`;
  // A self-signed certificate for the ldaps:// listener, which clients must refuse.
  const openssl = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      `${dir}/key.pem`,
      '-out',
      `${dir}/cert.pem`,
    ],
    { encoding: 'utf8' },
  );
  if (openssl.status !== 0) throw new Error(`openssl failed: ${openssl.stderr}`);
  await writeFile(
    path.join(dir, 'slapd.conf'),
    [
      ...['core', 'cosine', 'inetorgperson', 'nis'].map((schema) => `include ${SCHEMAS}/${schema}.schema`),
      `pidfile ${dir}/slapd.pid`,
      `TLSCertificateFile ${dir}/cert.pem`,
      `TLSCertificateKeyFile ${dir}/key.pem`,
      `modulepath ${MODULES}`,
      'moduleload back_mdb',
      'database mdb',
      `suffix "${SUFFIX}"`,
      `rootdn "${ROOT_DN}"`,
      `rootpw ${rootPassword}`,
      `directory ${dir}/data`,
      'maxsize 16777216',
      'access to attrs=userPassword by self write by anonymous auth by * none',
      'access to * by users read by * none',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(
    SLAPD,
    ['-f', `${dir}/slapd.conf`, '-h', `${uri}/ ${tlsUri}/`, '-d', '0'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  recordProcess(child);
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));

  const admin = async () => {
    const client = new Client({ url: uri, timeout: 5000, connectTimeout: 2000 });
    await client.bind(ROOT_DN, rootPassword);
    return client;
  };
  try {
    await waitFor(
      async () => {
        if (exited) throw new Error(`slapd exited: ${output.slice(-500)}`);
        const client = await admin();
        await client.unbind();
        return true;
      },
      { what: 'slapd to accept binds' },
    );
  } catch (error) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    uri,
    tlsUri,
    admin,
    async stop() {
      if (!exited) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await gone;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface Person {
  uid: string;
  password: string;
  mail?: string;
}

/** ou=people and ou=groups, the people, and groupOfNames entries listing them by DN. */
export async function loadDirectory(slapd: Slapd, people: Person[], groups: Record<string, string[]>) {
  const client = await slapd.admin();
  try {
    await client.add(SUFFIX, { objectClass: ['dcObject', 'organization'], dc: 'example', o: 'Example' });
    for (const ou of ['people', 'groups', 'services'])
      await client.add(`ou=${ou},${SUFFIX}`, { objectClass: 'organizationalUnit', ou });
    for (const person of people) {
      await client.add(personDn(person.uid), {
        objectClass: ['inetOrgPerson'],
        uid: person.uid,
        cn: person.uid,
        sn: person.uid,
        userPassword: person.password,
        ...(person.mail ? { mail: person.mail } : {}),
      });
    }
    for (const [cn, members] of Object.entries(groups)) {
      await client.add(`cn=${cn},ou=groups,${SUFFIX}`, {
        objectClass: 'groupOfNames',
        cn,
        member: members.map(personDn),
      });
    }
  } finally {
    await client.unbind();
  }
}

export const personDn = (uid: string) => `uid=${uid},ou=people,${SUFFIX}`;

/** A service account the gateway binds as (BIND_DN). */
export async function addServiceAccount(slapd: Slapd, cn: string, password: string): Promise<string> {
  const dn = `cn=${cn},ou=services,${SUFFIX}`;
  const client = await slapd.admin();
  try {
    await client.add(dn, {
      objectClass: ['organizationalRole', 'simpleSecurityObject'],
      cn,
      userPassword: password,
    });
  } finally {
    await client.unbind();
  }
  return dn;
}
