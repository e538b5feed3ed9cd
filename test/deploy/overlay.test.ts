/**
 * The example overlay (deploy/overlays/example) on the kustomize base (deploy/k8s): every file
 * it names exists and every patch targets an object of the base; rendered by kustomize (offline:
 * `kustomize build` or `kubectl kustomize`), the result is valid for the Kubernetes API, keeps
 * every object of the base with its selectors, and carries the overlay's image, replicas,
 * resources and host while the autoscalers and disruption budgets still fit the replicas.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  k8sObjects,
  ofKind,
  readYaml,
  REPO,
  type Deployment,
  type Hpa,
  type K8sObject,
  type KService,
  type Pdb,
} from './load';
import { schemaProblems } from './schema';
import { onPath, run } from './tools';

const OVERLAY = 'deploy/overlays/example';
const IMAGE = 'registry.example.com/pack/pack-platform:1.0.0';

interface Kustomization {
  resources?: string[];
  patches?: { path?: string; target?: { kind?: string; name?: string } }[];
  replicas?: { name: string; count: number }[];
  images?: { name: string }[];
}
const [kustomization] = readYaml(path.join(OVERLAY, 'kustomization.yaml')) as Kustomization[];
const base = k8sObjects().applied;
const id = (object: Pick<K8sObject, 'kind' | 'metadata'>) => `${object.kind}/${object.metadata.name}`;

describe(`${OVERLAY}, as written`, () => {
  it('builds on the base and uses every file of its folder', () => {
    expect(kustomization?.resources).toContain('../../k8s');
    const named = ['kustomization.yaml', ...(kustomization?.patches ?? []).map((p) => p.path)];
    const files = readdirSync(path.join(REPO, OVERLAY)).sort();
    expect(files).toEqual([...named].sort());
  });

  it('patches, scales and re-images only what the base has', () => {
    const unknown: string[] = [];
    for (const patch of kustomization?.patches ?? []) {
      const docs = readYaml(path.join(OVERLAY, patch.path!));
      // A strategic merge patch names its object; a JSON patch (a list of ops) has a target.
      const targets = Array.isArray(docs[0])
        ? [{ kind: patch.target?.kind, metadata: { name: patch.target?.name } }]
        : (docs as K8sObject[]);
      for (const target of targets) {
        if (!base.some((o) => id(o) === id(target as K8sObject)))
          unknown.push(`${patch.path}: ${id(target as K8sObject)}`);
      }
    }
    for (const { name } of kustomization?.replicas ?? []) {
      if (!ofKind(base, 'Deployment').some((d) => d.metadata.name === name))
        unknown.push(`replicas: ${name}`);
    }
    const images = new Set(
      ofKind<Deployment>(base, 'Deployment').flatMap((d) =>
        d.spec.template.spec.containers.map((c) => c.image.split(':')[0]),
      ),
    );
    for (const { name } of kustomization?.images ?? [])
      if (!images.has(name)) unknown.push(`images: ${name}`);
    expect(unknown).toEqual([]);
  });
});

/**
 * `kustomize build` where installed, else the kustomize built into kubectl (offline either way);
 * neither fails the tests (scripts/deps.sh installs kustomize).
 */
function kustomize(): [string, string] {
  const standalone = onPath('kustomize');
  if (standalone) return [standalone, 'build'];
  const viaKubectl = onPath('kubectl');
  if (viaKubectl) return [viaKubectl, 'kustomize'];
  throw new Error('neither kustomize nor kubectl is installed: run `sudo bash scripts/deps.sh install`');
}

function render(dir: string): K8sObject[] {
  const [file, command] = kustomize();
  const result = run(file, [command, dir], { cwd: REPO });
  if (result.status !== 0) throw new Error(`kustomize ${dir} failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout).map((doc) => doc.toJS() as K8sObject);
}

describe(`${OVERLAY}, rendered by kustomize`, () => {
  let rendered: K8sObject[];
  let renderedBase: K8sObject[];
  beforeAll(() => {
    renderedBase = render('deploy/k8s');
    rendered = render(OVERLAY);
  });
  const one = <T extends K8sObject>(objects: K8sObject[], kind: string, name: string) =>
    ofKind<T>(objects, kind).find((o) => o.metadata.name === name)!;

  it('renders the base to the objects of its files, and the overlay to the same objects', () => {
    expect(renderedBase.map(id).sort()).toEqual(base.map(id).sort());
    expect(rendered.map(id).sort()).toEqual(base.map(id).sort());
  });

  it('yields only objects the Kubernetes API accepts, all in namespace pack', () => {
    expect(rendered.flatMap(schemaProblems)).toEqual([]);
    expect(rendered.filter((o) => o.kind !== 'Namespace' && o.metadata.namespace !== 'pack').map(id)).toEqual(
      [],
    );
  });

  it('runs every container from the pinned release image', () => {
    const images = ofKind<Deployment>(rendered, 'Deployment').flatMap((d) =>
      d.spec.template.spec.containers.map((c) => c.image),
    );
    expect(images.length).toBe(ofKind(base, 'Deployment').length);
    expect(new Set(images)).toEqual(new Set([IMAGE]));
  });

  it('keeps every selector of the base (labels are added to objects and pods only)', () => {
    const selectors = (objects: K8sObject[]) =>
      [
        ...ofKind<Deployment>(objects, 'Deployment').map((d) => [id(d), d.spec.selector.matchLabels]),
        ...ofKind<KService>(objects, 'Service').map((s) => [id(s), s.spec.selector]),
        ...ofKind<Pdb>(objects, 'PodDisruptionBudget').map((p) => [id(p), p.spec.selector.matchLabels]),
      ].sort();
    expect(selectors(rendered)).toEqual(selectors(base));
    const pods = ofKind<Deployment>(rendered, 'Deployment').map(
      (d) => d.spec.template.metadata.labels?.['app.kubernetes.io/instance'],
    );
    expect(new Set(pods)).toEqual(new Set(['example']));
  });

  it('scales the gateway to 3 replicas, its autoscaler from 3 to 20, and every Deployment fits its HPA and PDB', () => {
    expect(one<Deployment>(rendered, 'Deployment', 'gateway').spec.replicas).toBe(3);
    const hpa = one<Hpa>(rendered, 'HorizontalPodAutoscaler', 'gateway');
    expect([hpa.spec.minReplicas, hpa.spec.maxReplicas]).toEqual([3, 20]);
    const misfits = ofKind<Deployment>(rendered, 'Deployment').flatMap((d) => {
      const scaler = ofKind<Hpa>(rendered, 'HorizontalPodAutoscaler').find(
        (h) => h.spec.scaleTargetRef.name === d.metadata.name,
      );
      const pdb = one<Pdb>(rendered, 'PodDisruptionBudget', d.metadata.name);
      const replicas = d.spec.replicas ?? 1;
      const problems: string[] = [];
      if (!scaler || replicas < (scaler.spec.minReplicas ?? 1) || replicas > scaler.spec.maxReplicas)
        problems.push(`${d.metadata.name}: ${replicas} replicas outside its autoscaler's range`);
      // A budget that keeps every replica would block node drains.
      if (typeof pdb?.spec.minAvailable !== 'number' || pdb.spec.minAvailable >= replicas)
        problems.push(`${d.metadata.name}: PodDisruptionBudget leaves no replica to disrupt`);
      return problems;
    });
    expect(misfits).toEqual([]);
  });

  it("gives the llm-gateway more memory and keeps the base's CPU", () => {
    const container = one<Deployment>(rendered, 'Deployment', 'llm-gateway').spec.template.spec
      .containers[0]!;
    const baseContainer = one<Deployment>(base, 'Deployment', 'llm-gateway').spec.template.spec
      .containers[0]!;
    expect(container.resources).toEqual({
      requests: { cpu: baseContainer.resources?.requests?.cpu, memory: '256Mi' },
      limits: { cpu: baseContainer.resources?.limits?.cpu, memory: '1Gi' },
    });
  });

  it('serves the public API on its own host, with a certificate for that host', () => {
    const ingress = one(rendered, 'Ingress', 'gateway') as unknown as {
      spec: { tls: { hosts: string[]; secretName: string }[]; rules: { host: string }[] };
    };
    expect(ingress.spec.rules.map((r) => r.host)).toEqual(['pack.staging.example.net']);
    expect(ingress.spec.tls).toEqual([
      { hosts: ['pack.staging.example.net'], secretName: 'pack-staging-tls' },
    ]);
  });
});
