/*
 * deploy.test.mjs - the shipped deployment files hold up: every manifest
 * in deploy/kubernetes is checked against the Kubernetes API schemas
 * (kubernetes-models, the OpenAPI definitions of the API), each pod meets
 * the restricted Pod Security Standard, has resources per container and
 * takes its secrets from Secrets, the autoscaler and the disruption
 * budget aim at the replicas, and deploy/haproxy/haproxy.cfg is one that
 * HAProxy (Debian's) accepts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './lib.mjs';

const K8S = path.join(REPO_ROOT, 'deploy', 'kubernetes');
const MODELS = {
  'v1/Namespace': 'v1/Namespace',
  'v1/Secret': 'v1/Secret',
  'v1/Service': 'v1/Service',
  'v1/ServiceAccount': 'v1/ServiceAccount',
  'apps/v1/StatefulSet': 'apps/v1/StatefulSet',
  'apps/v1/Deployment': 'apps/v1/Deployment',
  'autoscaling/v2/HorizontalPodAutoscaler': 'autoscaling/v2/HorizontalPodAutoscaler',
  'policy/v1/PodDisruptionBudget': 'policy/v1/PodDisruptionBudget',
  'networking.k8s.io/v1/NetworkPolicy': 'networking.k8s.io/v1/NetworkPolicy',
};

function manifests() {
  const out = [];
  for (const f of fs.readdirSync(K8S).filter((n) => n.endsWith('.yaml') && n !== 'kustomization.yaml').sort()) {
    for (const doc of parseAllDocuments(fs.readFileSync(path.join(K8S, f), 'utf8'))) {
      assert.deepEqual(doc.errors, [], `${f} is YAML`);
      out.push({ file: f, obj: doc.toJS() });
    }
  }
  return out;
}

test('every manifest is valid against the Kubernetes API schema', async () => {
  const all = manifests();
  assert.ok(all.length >= 10, `${all.length} objects`);
  for (const { file, obj } of all) {
    const key = `${obj.apiVersion}/${obj.kind}`;
    assert.ok(MODELS[key], `${file}: ${key} is one of the kinds this check knows`);
    const mod = await import(`kubernetes-models/${MODELS[key]}`);
    const Model = mod[obj.kind];
    assert.doesNotThrow(() => new Model(obj).validate(), `${file}: ${key} ${obj.metadata?.name}`);
    assert.equal(obj.metadata.namespace ?? (obj.kind === 'Namespace' ? undefined : 'missing'), obj.kind === 'Namespace' ? undefined : 'glassbox', `${file}: ${obj.kind} in the glassbox namespace`);
  }
  // and the check can fail: a wrong type is refused
  const { StatefulSet } = await import('kubernetes-models/apps/v1/StatefulSet');
  const sts = all.find((m) => m.obj.kind === 'StatefulSet').obj;
  const broken = structuredClone(sts);
  broken.spec.replicas = 'three';
  assert.throws(() => new StatefulSet(broken).validate());
  // kustomization lists every file
  const k = parseAllDocuments(fs.readFileSync(path.join(K8S, 'kustomization.yaml'), 'utf8'))[0].toJS();
  const files = fs.readdirSync(K8S).filter((n) => n.endsWith('.yaml') && !['kustomization.yaml', 'secrets.example.yaml'].includes(n));
  assert.deepEqual([...k.resources].sort(), files.sort());
});

test('every pod meets the restricted Pod Security Standard, with resources and secrets from Secrets', () => {
  const all = manifests();
  const ns = all.find((m) => m.obj.kind === 'Namespace').obj;
  assert.equal(ns.metadata.labels['pod-security.kubernetes.io/enforce'], 'restricted');
  const workloads = all.filter((m) => ['StatefulSet', 'Deployment'].includes(m.obj.kind));
  assert.equal(workloads.length, 2);
  for (const { file, obj } of workloads) {
    const pod = obj.spec.template.spec;
    assert.equal(pod.securityContext.runAsNonRoot, true, file);
    assert.ok(pod.securityContext.runAsUser > 0, file);
    assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault', file);
    assert.equal(pod.automountServiceAccountToken, false, file);
    assert.ok(!pod.hostNetwork && !pod.hostPID && !pod.hostIPC, file);
    for (const c of [...(pod.initContainers || []), ...pod.containers]) {
      const sc = c.securityContext;
      assert.equal(sc.allowPrivilegeEscalation, false, `${file} ${c.name}`);
      assert.equal(sc.readOnlyRootFilesystem, true, `${file} ${c.name}`);
      assert.deepEqual(sc.capabilities.drop, ['ALL'], `${file} ${c.name}`);
      assert.ok(!sc.capabilities.add, `${file} ${c.name} adds no capability`);
      assert.ok(!sc.privileged, `${file} ${c.name}`);
      assert.ok(c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory, `${file} ${c.name} has requests and limits`);
      for (const e of c.env || []) assert.ok(!/SECRET|PASSWORD|TOKEN|KEY/i.test(e.name) || e.valueFrom?.secretKeyRef, `${file} ${c.name}: ${e.name} from a Secret`);
    }
    for (const v of pod.volumes || []) assert.ok(!v.hostPath, `${file}: no hostPath volume`);
  }
  const sts = workloads.find((m) => m.obj.kind === 'StatefulSet').obj;
  const pod = sts.spec.template.spec;
  const gb = pod.containers[0];
  // the replica id is the pod's name; the config, keys and S3 credentials are Secrets
  assert.equal(gb.env.find((e) => e.name === 'GLASSBOX_REPLICA_ID').valueFrom.fieldRef.fieldPath, 'metadata.name');
  const secretVols = pod.volumes.filter((v) => v.secret).map((v) => v.secret.secretName).sort();
  assert.deepEqual(secretVols, ['glassbox-config', 'glassbox-keys', 'glassbox-s3']);
  assert.equal(gb.readinessProbe.httpGet.path, '/readyz');
  // memory: 512 MiB a browser times max_sessions (serve.json in the example Secret) plus 512 MiB
  const example = all.find((m) => m.obj.kind === 'Secret' && m.obj.metadata.name === 'glassbox-config').obj;
  const cfg = JSON.parse(example.stringData['serve.json']);
  const mib = parseInt(gb.resources.limits.memory, 10);
  assert.equal(mib, cfg.limits.max_sessions * 512 + 512, 'memory limit per browser');
  assert.ok(sts.spec.template.spec.terminationGracePeriodSeconds >= cfg.replica.drain_s + cfg.limits.shutdown_grace_s, 'the grace period covers the drain');
});

test('the autoscaler scales the replicas on sessions, the budget keeps all but one, the network policy keeps private ranges out', () => {
  const all = manifests();
  const hpa = all.find((m) => m.obj.kind === 'HorizontalPodAutoscaler').obj;
  assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'glassbox' });
  assert.match(hpa.spec.metrics[0].pods.metric.name, /^glassbox_sessions/);
  const servers = fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'haproxy', 'haproxy.cfg'), 'utf8').split('\n').filter((l) => /^\s*server /.test(l));
  assert.equal(hpa.spec.maxReplicas, servers.length, 'no more replicas than HAProxy routes to');
  const pdb = all.find((m) => m.obj.kind === 'PodDisruptionBudget').obj;
  assert.equal(pdb.spec.maxUnavailable, 1);
  assert.deepEqual(pdb.spec.selector.matchLabels, { 'app.kubernetes.io/name': 'glassbox' });
  const np = all.find((m) => m.obj.kind === 'NetworkPolicy' && m.obj.metadata.name === 'glassbox').obj;
  const open = np.spec.egress.flatMap((e) => e.to).find((t) => t.ipBlock?.cidr === '0.0.0.0/0');
  for (const r of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']) assert.ok(open.ipBlock.except.includes(r), r);
});

test('HAProxy accepts the shipped config', () => {
  const env = { ...process.env, GLASSBOX_LISTEN: '127.0.0.1:1', GLASSBOX_R1: '127.0.0.1:2', GLASSBOX_R2: '127.0.0.1:3', GLASSBOX_R3: '127.0.0.1:4', GLASSBOX_R1_ADMIN_PORT: '5', GLASSBOX_R2_ADMIN_PORT: '6', GLASSBOX_R3_ADMIN_PORT: '7' };
  const r = spawnSync('haproxy', ['-c', '-f', path.join(REPO_ROOT, 'deploy', 'haproxy', 'haproxy.cfg')], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  for (const code of ['502', '503', '504']) {
    const text = fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'haproxy', 'errors', `${code}.http`), 'utf8');
    const [head, body] = text.split('\r\n\r\n');
    assert.match(head, new RegExp(`^HTTP/1.1 ${code} `));
    assert.equal(Number(head.match(/Content-Length: (\d+)/)[1]), Buffer.byteLength(body));
    assert.equal(JSON.parse(body).error.data.reason, 'replica_unavailable');
  }
});
