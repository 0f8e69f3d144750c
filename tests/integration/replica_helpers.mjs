/*
 * replica_helpers.mjs - what the replica tests share (replicas*.test.mjs,
 * store_replicas.test.mjs, objects_audit.test.mjs): the fixture site, a
 * throwaway PostgreSQL, a real S3-API server on loopback
 * (tests/e2e/s3_server.mjs) with its credentials in files and a store
 * config for `--store`, and several `glassbox serve` replicas of that
 * store, each on a data dir of its own.
 *
 *   const env = replicaEnv();
 *   before(() => env.start({ postgres: true, bucket: 'replicas' }));
 *   after(() => env.stop());
 *   const r1 = await env.startReplica('r1', { tenants: { acme: {} } });
 *   shareSecret(r1.dataDir, dir2);   // the keys one Kubernetes Secret gives
 *
 * env is made at once and filled by start(), so stop() ends whatever a
 * start that failed half-way got running.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startFixtureServer, glassboxBin, newDataDir, REPO_ROOT } from '../e2e/lib.mjs';
import { startS3 } from '../e2e/s3_server.mjs';
import { startServe } from './serve_helpers.mjs';
import { startPostgres } from './postgres_helpers.mjs';

export function replicaEnv() {
  const env = {
    fixture: null,
    pg: null,
    s3: null,
    work: null,
    objectStore: undefined,
    storeConfig: null,
    /* the replicas by name, the latest start of each */
    replicas: {},

    /*
     * Starts the fixture server; with postgres, a throwaway PostgreSQL
     * (env.pg); with bucket, a real S3-API server holding it (env.s3).
     * Makes a work dir (env.work, named after workPrefix) with the
     * bucket's credentials (akid, secret, 0600) and store.json
     * (env.storeConfig, 0600: {object_store, store: {postgres}}, what is
     * there). env.objectStore is the config's object_store (prefix: the
     * keys' prefix in the bucket), undefined without a bucket.
     */
    async start({ postgres = false, bucket, prefix, workPrefix = 'glassbox-replicas-' } = {}) {
      if (postgres) env.pg = await startPostgres();
      env.fixture = await startFixtureServer();
      env.work = newDataDir(workPrefix);
      const config = {};
      if (bucket) {
        env.s3 = await startS3({ bucket });
        fs.writeFileSync(path.join(env.work, 'akid'), env.s3.accessKeyId + '\n', { mode: 0o600 });
        fs.writeFileSync(path.join(env.work, 'secret'), env.s3.secretAccessKey + '\n', { mode: 0o600 });
        env.objectStore = {
          s3: {
            endpoint: env.s3.endpoint,
            bucket,
            path_style: true,
            ...(prefix ? { prefix } : {}),
            access_key_id_file: path.join(env.work, 'akid'),
            secret_access_key_file: path.join(env.work, 'secret'),
          },
        };
        config.object_store = env.objectStore;
      }
      if (env.pg) config.store = { postgres: env.pg.url };
      env.storeConfig = path.join(env.work, 'store.json');
      fs.writeFileSync(env.storeConfig, JSON.stringify(config), { mode: 0o600 });
      return env;
    },

    /*
     * Starts replica name: startServe with opts (tenants, dataDir, tokens,
     * admin, ports, env...), its store the env's PostgreSQL and its
     * object_store the env's bucket, where they were started, and a
     * replica section {id: name, ...replica} (replica false: none; the id
     * then comes from elsewhere, e.g. GLASSBOX_REPLICA_ID in opts.env).
     * Returns the service, also kept as env.replicas[name].
     */
    async startReplica(name, { replica = {}, extra = {}, ...opts } = {}) {
      const more = { ...extra };
      if (env.objectStore) more.object_store = env.objectStore;
      if (replica !== false) more.replica = { id: name, ...replica };
      const svc = await startServe({
        ...(env.pg ? { store: { postgres: env.pg.url } } : {}),
        ...opts,
        extra: more,
      });
      env.replicas[name] = svc;
      return svc;
    },

    /*
     * `glassbox ARGS` on the work dir (GLASSBOX_DATA_DIR), environment
     * extra over this process's: {code, out, err}. Not spawnSync: the S3
     * server's front runs in this process.
     */
    run(args, extra = {}) {
      return new Promise((resolve) => {
        const p = spawn(glassboxBin(), args, { cwd: REPO_ROOT, env: { ...process.env, GLASSBOX_DATA_DIR: env.work, ...extra } });
        let out = '';
        let err = '';
        p.stdout.on('data', (d) => (out += d));
        p.stderr.on('data', (d) => (err += d));
        p.on('exit', (code) => resolve({ code, out, err }));
      });
    },

    /* Stops every replica (SIGTERM), kills browsers one left behind and
     * removes its data dir; then the fixture, S3 and PostgreSQL servers
     * and the work dir. Whatever was not started is passed over. */
    async stop() {
      for (const svc of Object.values(env.replicas)) {
        await svc.stop('SIGTERM');
        svc.killLeftovers();
        svc.removeDataDir();
      }
      if (env.fixture) await env.fixture.close();
      if (env.s3) await env.s3.stop();
      if (env.pg) await env.pg.stop();
      if (env.work) fs.rmSync(env.work, { recursive: true, force: true });
    },
  };
  return env;
}

/*
 * Gives dataDir the keys one Kubernetes Secret gives every replica: the
 * files directly in from's keys dir (the master key, the audit key
 * pair), none of its subdirs (tenant keys). Returns dataDir.
 */
export function shareSecret(from, dataDir) {
  const src = path.join(from, 'keys');
  const dst = path.join(dataDir, 'keys');
  fs.mkdirSync(dst, { recursive: true, mode: 0o700 });
  for (const f of fs.readdirSync(src))
    if (fs.statSync(path.join(src, f)).isFile()) fs.copyFileSync(path.join(src, f), path.join(dst, f));
  return dataDir;
}
