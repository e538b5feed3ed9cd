/**
 * The operations files against the code: every service of deploy/services.yaml that exists under
 * services/ must be deployable by docker-compose.yml and deploy/k8s, with only the variables its
 * env schema declares, on the port it listens on, probed and scraped (on its metrics port).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  builtServices,
  commandLine,
  compose,
  composeEnv,
  defaultOf,
  envPrefix,
  k8sFiles,
  k8sObjects,
  kustomizationResources,
  loadEnvSchema,
  ofKind,
  platformServices,
  publishedPorts,
  readYaml,
  REPO,
  selects,
  serviceDirs,
  type ComposeService,
  type ConfigMap,
  type Container,
  type Deployment,
  type EnvSchema,
  type Hpa,
  type Ingress,
  type KService,
  type NetworkPolicy,
  type Pdb,
  type Probe,
  type Secret,
} from './load';

const SERVICES = builtServices().map((entry) => entry.name);
const NAMESPACE = 'pack';
const PUBLIC_SERVICE = platformServices().find((entry) => entry.public)?.name ?? '(none)';
const PLACEHOLDER = /^REPLACE_ME\b/;
/** Variables a service has in its schema (from the shared base) but does not use, so it is not given them. */
const NOT_USED: Record<string, string[]> = {};
const LOOPBACK = /127\.0\.0\.1|localhost|\[::1\]/;

const { applied, all } = k8sObjects();
const deployments = ofKind<Deployment>(applied, 'Deployment');
const k8sServices = ofKind<KService>(applied, 'Service');
const configMaps = ofKind<ConfigMap>(applied, 'ConfigMap');
const secrets = ofKind<Secret>(all, 'Secret');
const composeFile = compose();
const isAppService = (service: ComposeService) =>
  service.build !== undefined || /^pack-platform\b/.test(service.image ?? '');
const composeApps = Object.entries(composeFile.services).filter(([, service]) => isAppService(service));

const schemas = new Map<string, EnvSchema>();
beforeAll(async () => {
  for (const service of SERVICES) schemas.set(service, await loadEnvSchema(service));
});
const schemaOf = (service: string) => schemas.get(service)!;

const keysOf = (secret: Secret | undefined) => Object.keys({ ...secret?.data, ...secret?.stringData });
/** Every key of every Secret manifest: the values a service may only get from a Secret. */
const secretKeys = new Set(secrets.flatMap(keysOf));
const secretHas = (name: string, key: string) =>
  keysOf(secrets.find((s) => s.metadata.name === name)).includes(key);

function deploymentOf(service: string): Deployment {
  const deployment = deployments.find((d) => d.metadata.name === service);
  if (!deployment) throw new Error(`deploy/k8s has no Deployment named ${service}`);
  return deployment;
}

function containerOf(service: string): Container {
  const containers = deploymentOf(service).spec.template.spec.containers;
  const container =
    containers.find((c) => c.name === service) ?? (containers.length === 1 ? containers[0] : undefined);
  if (!container) throw new Error(`Deployment ${service} has no container named ${service}`);
  return container;
}

function podLabels(service: string): Record<string, string> {
  return deploymentOf(service).spec.template.metadata.labels ?? {};
}

/** The port a service listens on given its environment (`<SERVICE>_PORT` wins over PORT where the schema has it). */
function listenPort(service: string, env: Map<string, string | null>): number {
  const own = `${envPrefix(service)}_PORT`;
  const schema = schemaOf(service);
  const raw = (own in schema.shape && env.get(own)) || env.get('PORT');
  return Number(raw ?? defaultOf(schema.shape.PORT!).value);
}

/** The internal metrics port a service listens on given its environment. */
function metricsPort(service: string, env: Map<string, string | null>): number {
  return Number(env.get('METRICS_PORT') ?? defaultOf(schemaOf(service).shape.METRICS_PORT!).value);
}

/** The environment of a Kubernetes container: literal values, or null for values from a Secret or file. */
function k8sEnv(container: Container): { env: Map<string, string | null>; problems: string[] } {
  const env = new Map<string, string | null>();
  const problems: string[] = [];
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) {
      const configMap = configMaps.find((c) => c.metadata.name === from.configMapRef!.name);
      if (!configMap) problems.push(`envFrom: no ConfigMap ${from.configMapRef.name} in the kustomization`);
      for (const [name, value] of Object.entries(configMap?.data ?? {})) env.set(name, value);
    }
    if (from.secretRef) {
      const secret = secrets.find((s) => s.metadata.name === from.secretRef!.name);
      if (!secret) problems.push(`envFrom: no Secret ${from.secretRef.name} in deploy/k8s`);
      for (const name of keysOf(secret)) env.set(name, null);
    }
  }
  for (const variable of container.env ?? []) env.set(variable.name, variable.value ?? null);
  return { env, problems };
}

/** The checks both deployments share: names, values, what must be set, where upstream URLs point. */
function envProblems(
  service: string,
  env: Map<string, string | null>,
  upstreamUrl: (upstream: string) => string | undefined,
): string[] {
  const problems: string[] = [];
  const { shape } = schemaOf(service);
  const provided = new Set<string>();
  for (const [name, value] of env) {
    const base =
      name.endsWith('_FILE') && name.slice(0, -'_FILE'.length) in shape
        ? name.slice(0, -'_FILE'.length)
        : name;
    const field = shape[base];
    if (!field) {
      problems.push(`${name} is not a variable of ${service}'s env schema`);
      continue;
    }
    provided.add(base);
    if (base === name && value !== null && !value.includes('${') && !field.safeParse(value).success) {
      problems.push(`${name}=${value} is refused by ${service}'s env schema`);
    }
  }
  const notUsed = NOT_USED[service] ?? [];
  for (const [name, field] of Object.entries(shape)) {
    if (provided.has(name) || notUsed.includes(name)) continue;
    const { required, value } = defaultOf(field);
    if (required) problems.push(`${name} is required and not set`);
    // HTTP upstreams are checked below, for the services that exist; the others cannot be set yet.
    else if (typeof value === 'string' && LOOPBACK.test(value) && !/^https?:/.test(value)) {
      problems.push(`${name} is not set: its default ${value} means the container itself`);
    } else if (secretKeys.has(name)) problems.push(`${name} is in the Secret but not given to ${service}`);
  }
  if (env.get('HOST') !== '0.0.0.0') {
    problems.push(`HOST must be 0.0.0.0 in a container, not ${env.get('HOST')}`);
  }
  for (const upstream of SERVICES) {
    const name = `${envPrefix(upstream)}_URL`;
    if (upstream === service || !(name in shape)) continue;
    const expected = upstreamUrl(upstream);
    if (env.get(name) !== expected) problems.push(`${name} must be ${expected}, not ${env.get(name)}`);
  }
  return problems;
}

function probePort(container: Container, probe: Probe | undefined): number | undefined {
  const port = probe?.httpGet?.port;
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

describe('deploy/services.yaml', () => {
  const list = platformServices();

  it('lists every folder under services/, each once, with distinct ports', () => {
    const names = list.map((entry) => entry.name);
    expect(serviceDirs().filter((dir) => !names.includes(dir))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    const ports = list.flatMap((entry) => [entry.port, entry.metrics_port]);
    expect(new Set(ports).size).toBe(ports.length);
    expect(list.filter((entry) => entry.public).map((entry) => entry.name)).toEqual(['gateway']);
  });

  it("agrees with each existing service's env schema on PORT and METRICS_PORT", () => {
    const defaults = builtServices().map((entry) => ({
      name: entry.name,
      port: defaultOf(schemaOf(entry.name).shape.PORT!).value,
      metrics_port: defaultOf(schemaOf(entry.name).shape.METRICS_PORT!).value,
    }));
    expect(defaults).toEqual(
      builtServices().map(({ name, port, metrics_port }) => ({ name, port, metrics_port })),
    );
  });
});

describe('deploy/k8s', () => {
  it('kustomization.yaml applies every manifest except the example Secret', () => {
    const expected = k8sFiles().filter(
      (file) => file !== 'kustomization.yaml' && file !== 'secret.example.yaml',
    );
    expect([...kustomizationResources()].sort()).toEqual(expected);
    expect(ofKind(applied, 'Secret')).toEqual([]);
  });

  it(`puts every namespaced object in namespace ${NAMESPACE}`, () => {
    const elsewhere = all
      .filter((object) => object.kind !== 'Namespace' && object.metadata.namespace !== NAMESPACE)
      .map((object) => `${object.kind}/${object.metadata.name}`);
    expect(elsewhere).toEqual([]);
    expect(ofKind(applied, 'Namespace').map((n) => n.metadata.name)).toEqual([NAMESPACE]);
  });

  it('has no Deployment for a service that does not exist under services/', () => {
    expect(deployments.map((d) => d.metadata.name).filter((name) => !SERVICES.includes(name))).toEqual([]);
  });

  it(`exposes only the ${PUBLIC_SERVICE} outside the cluster`, () => {
    const backends = ofKind<Ingress>(applied, 'Ingress').flatMap((ingress) => [
      ingress.spec.defaultBackend?.service?.name,
      ...(ingress.spec.rules ?? []).flatMap((rule) =>
        (rule.http?.paths ?? []).map((p) => p.backend.service?.name),
      ),
    ]);
    const external = k8sServices
      .filter((s) => s.spec.type && s.spec.type !== 'ClusterIP')
      .map((s) => s.metadata.name);
    expect(new Set([...backends.filter(Boolean), ...external])).toEqual(new Set([PUBLIC_SERVICE]));
  });

  it('gives every service its own database', () => {
    const databases = SERVICES.map((service) => k8sEnv(containerOf(service)).env.get('MONGO_DB'));
    expect(databases.every(Boolean)).toBe(true);
    expect(new Set(databases).size).toBe(SERVICES.length);
  });

  it('the Prometheus scrape config keeps annotated pods of the namespace, at their annotated port and path', () => {
    const configMap = configMaps.find((c) => c.metadata.name === 'pack-prometheus-scrape');
    const config = parse(configMap?.data?.['prometheus.yml'] ?? '') as {
      scrape_configs?: {
        kubernetes_sd_configs?: { role: string; namespaces?: { names: string[] } }[];
        relabel_configs?: {
          source_labels?: string[];
          action?: string;
          regex?: string;
          target_label?: string;
        }[];
      }[];
    } | null;
    const job = config?.scrape_configs?.find((j) =>
      j.kubernetes_sd_configs?.some(
        (sd) => sd.role === 'pod' && (!sd.namespaces || sd.namespaces.names.includes(NAMESPACE)),
      ),
    );
    expect(job).toBeDefined();
    const relabel = job?.relabel_configs ?? [];
    const annotation = (name: string) => `__meta_kubernetes_pod_annotation_prometheus_io_${name}`;
    expect(relabel).toContainEqual(
      expect.objectContaining({ source_labels: [annotation('scrape')], action: 'keep', regex: 'true' }),
    );
    expect(relabel.find((r) => r.target_label === '__address__')?.source_labels).toContain(
      annotation('port'),
    );
    expect(relabel.find((r) => r.target_label === '__metrics_path__')?.source_labels).toEqual([
      annotation('path'),
    ]);
  });
});

describe('Secret manifests', () => {
  const values = secrets.flatMap((secret) =>
    Object.entries(secret.stringData ?? {}).map(([key, value]) => ({ key, value })),
  );

  it('hold placeholders only', () => {
    expect(secrets.length).toBeGreaterThan(0);
    expect(secrets.filter((secret) => secret.data !== undefined).map((s) => s.metadata.name)).toEqual([]);
    expect(values.filter(({ value }) => !PLACEHOLDER.test(value))).toEqual([]);
  });

  it('hold placeholders that every service refuses, so a forgotten one stops it at start', () => {
    const accepted = values.flatMap(({ key, value }) =>
      SERVICES.filter((service) => schemaOf(service).shape[key]?.safeParse(value).success).map(
        (service) => `${service} accepts ${key}=${value}`,
      ),
    );
    expect(accepted).toEqual([]);
  });

  it('and docker-compose.yml takes secrets from the caller, never from the file', () => {
    const literal = composeApps.flatMap(([name, service]) =>
      Object.entries(composeEnv(service))
        .filter(([variable]) => /SECRET|TOKEN|PASSWORD|ENCRYPTION/.test(variable))
        // `${NAME:?message}`, `${NAME}` or `${NAME:-}`: from the caller's environment, no default.
        .filter(
          ([variable, value]) => !new RegExp(`^\\$\\{${variable}(:?\\?[^}]*|:-)?\\}$`).test(value ?? ''),
        )
        .map(([variable, value]) => `${name}: ${variable}=${value}`),
    );
    expect(literal).toEqual([]);
  });
});

describe('docker-compose.yml', () => {
  it('has no service container for a service that does not exist under services/', () => {
    expect(composeApps.map(([name]) => name).filter((name) => !SERVICES.includes(name))).toEqual([]);
  });

  it(`publishes only the ${PUBLIC_SERVICE} among the services`, () => {
    expect(
      composeApps.filter(([, service]) => publishedPorts(service).length > 0).map(([name]) => name),
    ).toEqual([PUBLIC_SERVICE]);
  });

  it('mounts deploy/prometheus (configuration and alert rules) into Prometheus', () => {
    const prometheus = Object.values(composeFile.services).find((s) =>
      /^prom\/prometheus\b/.test(s.image ?? ''),
    );
    expect(prometheus?.volumes).toContainEqual(
      expect.stringMatching(/^\.\/deploy\/prometheus:\/etc\/prometheus(:ro)?$/),
    );
  });
});

describe.each(SERVICES)('service %s', (service) => {
  describe('in deploy/k8s', () => {
    const port = () => listenPort(service, k8sEnv(containerOf(service)).env);

    it('has a Deployment of 2+ replicas that runs its compiled main.ts with plain node', () => {
      const deployment = deploymentOf(service);
      expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
      expect(selects(deployment.spec.selector.matchLabels, podLabels(service))).toBe(true);
      const command = commandLine([
        ...(containerOf(service).command ?? []),
        ...(containerOf(service).args ?? []),
      ]);
      expect(command).toMatch(new RegExp(`^node (--[a-z-]+(=\\S+)? )*services/${service}/dist/main\\.js$`));
      expect(existsSync(path.join(REPO, 'services', service, 'src', 'main.ts'))).toBe(true);
    });

    it('listens on its documented port and metrics port, and the container declares both', () => {
      expect(port()).toBe(defaultOf(schemaOf(service).shape.PORT!).value);
      const metrics = metricsPort(service, k8sEnv(containerOf(service)).env);
      expect(containerOf(service).ports?.map((p) => p.containerPort)).toEqual([port(), metrics]);
    });

    // The internal listener: the public port's health endpoints are rate limited per client
    // (docs/decisions/0029), and the kubelet must never be refused.
    it('is probed: readiness on /readyz, liveness on /healthz, on its metrics port', () => {
      const container = containerOf(service);
      const metrics = metricsPort(service, k8sEnv(container).env);
      expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(probePort(container, container.readinessProbe)).toBe(metrics);
      expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(probePort(container, container.livenessProbe)).toBe(metrics);
      if (container.startupProbe) expect(probePort(container, container.startupProbe)).toBe(metrics);
    });

    it(`is reached only as NetworkPolicies allow: its main port from pack pods${service === PUBLIC_SERVICE ? ' and anyone' : ''}, its metrics port from monitoring`, () => {
      const policies = ofKind<NetworkPolicy>(applied, 'NetworkPolicy').filter(
        (p) =>
          p.spec.policyTypes?.includes('Ingress') &&
          selects(p.spec.podSelector.matchLabels, podLabels(service)),
      );
      expect(policies.length).toBeGreaterThan(0); // selected: everything not allowed is refused
      const portName = (port: number | string | undefined) =>
        typeof port === 'number'
          ? containerOf(service).ports?.find((p) => p.containerPort === port)?.name
          : port;
      const allowed = new Set<string>();
      for (const rule of policies.flatMap((p) => p.spec.ingress ?? [])) {
        const ports = (rule.ports ?? [{ port: undefined }]).map((p) => portName(p.port) ?? 'every port');
        const peers = (rule.from ?? [{}]).map((peer) => {
          if (peer.ipBlock || (!peer.podSelector && !peer.namespaceSelector)) return 'anyone';
          if (peer.namespaceSelector)
            return `namespace ${JSON.stringify(peer.namespaceSelector.matchLabels)}`;
          return selects(peer.podSelector?.matchLabels, { 'app.kubernetes.io/part-of': 'pack' })
            ? 'pack pods'
            : 'other pods';
        });
        for (const port of ports) for (const peer of peers) allowed.add(`${port} from ${peer}`);
      }
      expect([...allowed].sort()).toEqual(
        [
          'http from pack pods',
          ...(service === PUBLIC_SERVICE ? ['http from anyone'] : []),
          'metrics from namespace {"kubernetes.io/metadata.name":"monitoring"}',
        ].sort(),
      );
    });

    it('has CPU and memory requests and limits', () => {
      const { requests, limits } = containerOf(service).resources ?? {};
      expect(Object.keys(requests ?? {}).sort()).toEqual(['cpu', 'memory']);
      expect(Object.keys(limits ?? {}).sort()).toEqual(['cpu', 'memory']);
    });

    it('runs as a non-root uid with a read-only root filesystem (and a writable /tmp)', () => {
      const pod = deploymentOf(service).spec.template.spec;
      const container = containerOf(service);
      expect(pod.securityContext?.runAsNonRoot ?? container.securityContext?.runAsNonRoot).toBe(true);
      // The image's USER is a name (node); the kubelet can only verify non-root with a numeric uid.
      expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
      expect(container.securityContext?.allowPrivilegeEscalation).toBe(false);
      const tmp = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
      expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
    });

    it('sets only variables of its env schema, with valid values, and everything it needs', () => {
      const { env, problems } = k8sEnv(containerOf(service));
      const serviceUrl = (upstream: string) => {
        const target = k8sServices.find((s) => s.metadata.name === upstream);
        return `http://${upstream}:${target?.spec.ports[0]?.port}`;
      };
      expect([...problems, ...envProblems(service, env, serviceUrl)]).toEqual([]);
    });

    it('reads each <NAME>_FILE from a read-only mount of a Secret key that exists', () => {
      const container = containerOf(service);
      const pod = deploymentOf(service).spec.template.spec;
      const problems: string[] = [];
      for (const variable of container.env ?? []) {
        const ref = variable.valueFrom?.secretKeyRef;
        if (ref && !ref.optional && !secretHas(ref.name, ref.key))
          problems.push(`${variable.name}: no key ${ref.key} in Secret ${ref.name}`);
        if (!variable.name.endsWith('_FILE')) continue;
        const file = variable.value ?? '';
        const mount = container.volumeMounts?.find((m) => file.startsWith(`${m.mountPath}/`));
        const volume = pod.volumes?.find((v) => v.name === mount?.name);
        const relative = mount ? file.slice(mount.mountPath.length + 1) : '';
        const key = volume?.secret?.items
          ? volume.secret.items.find((i) => i.path === relative)?.key
          : relative;
        if (!mount?.readOnly || !volume?.secret || !key || !secretHas(volume.secret.secretName, key)) {
          problems.push(`${variable.name}: ${file} is not a key of a Secret mounted read-only`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('has a ClusterIP Service whose targetPort is the container port', () => {
      const target = k8sServices.find((s) => s.metadata.name === service);
      expect(target).toBeDefined();
      expect(selects(target!.spec.selector, podLabels(service))).toBe(true);
      const others = deployments.filter((d) => d.metadata.name !== service);
      expect(others.filter((d) => selects(target!.spec.selector, d.spec.template.metadata.labels))).toEqual(
        [],
      );
      expect(target!.spec.ports).toHaveLength(1);
      const targetPort = target!.spec.ports[0]!.targetPort ?? target!.spec.ports[0]!.port;
      const container = containerOf(service);
      expect(
        typeof targetPort === 'number'
          ? targetPort
          : container.ports?.find((p) => p.name === targetPort)?.containerPort,
      ).toBe(port());
    });

    it('has a CPU HorizontalPodAutoscaler (2+ replicas) and a PodDisruptionBudget', () => {
      const hpa = ofKind<Hpa>(applied, 'HorizontalPodAutoscaler').find(
        (h) => h.spec.scaleTargetRef.name === service,
      );
      expect(hpa?.apiVersion).toBe('autoscaling/v2');
      expect(hpa?.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: service });
      expect(hpa?.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa?.spec.maxReplicas).toBeGreaterThanOrEqual(hpa?.spec.minReplicas ?? 2);
      expect(hpa?.spec.metrics?.some((m) => m.type === 'Resource' && m.resource?.name === 'cpu')).toBe(true);
      const pdbs = ofKind<Pdb>(applied, 'PodDisruptionBudget').filter((p) =>
        selects(p.spec.selector.matchLabels, podLabels(service)),
      );
      expect(pdbs.map((p) => p.spec.minAvailable)).toEqual([1]);
    });

    it('is annotated for Prometheus at /metrics on its metrics port', () => {
      expect(deploymentOf(service).spec.template.metadata.annotations).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(metricsPort(service, k8sEnv(containerOf(service)).env)),
        'prometheus.io/path': '/metrics',
      });
    });
  });

  describe('in docker-compose.yml', () => {
    const container = () => {
      const found = composeFile.services[service];
      if (!found || !isAppService(found))
        throw new Error(`docker-compose.yml has no service ${service} built from the Dockerfile`);
      return found;
    };
    const env = () => new Map(Object.entries(composeEnv(container())));
    const composePort = (name: string) =>
      listenPort(name, new Map(Object.entries(composeEnv(composeFile.services[name] ?? {}))));

    it('runs its compiled main.ts with plain node on its documented port', () => {
      expect(commandLine(container().command)).toMatch(
        new RegExp(`^node (--[a-z-]+(=\\S+)? )*services/${service}/dist/main\\.js$`),
      );
      expect(composePort(service)).toBe(defaultOf(schemaOf(service).shape.PORT!).value);
    });

    it('sets only variables of its env schema, with valid values, and everything it needs', () => {
      expect(
        envProblems(service, env(), (upstream) => `http://${upstream}:${composePort(upstream)}`),
      ).toEqual([]);
    });

    it('is healthy when /readyz answers on its port, and waits for what it needs to be healthy', () => {
      expect(commandLine(container().healthcheck?.test)).toContain(`:${composePort(service)}/readyz`);
      const dependsOn = container().depends_on;
      expect(Array.isArray(dependsOn)).toBe(false);
      const conditions = dependsOn as Record<string, { condition?: string }>;
      for (const [name, { condition }] of Object.entries(conditions)) {
        expect({ name, condition }).toEqual({ name, condition: 'service_healthy' });
        expect(composeFile.services[name]?.healthcheck?.test).toBeDefined();
      }
      const image = (name: string) =>
        Object.entries(composeFile.services).find(([, s]) => s.image?.startsWith(name))?.[0];
      const needed = [
        image('mongo:'),
        ...SERVICES.filter((u) => u !== service && env().has(`${envPrefix(u)}_URL`)),
      ];
      if (!(NOT_USED[service] ?? []).includes('AMQP_URL')) needed.push(image('rabbitmq:'));
      expect(Object.keys(conditions).sort()).toEqual(expect.arrayContaining(needed.sort()));
    });

    it('is scraped by deploy/prometheus/prometheus.yml at /metrics on its metrics port', () => {
      const [config] = readYaml('deploy/prometheus/prometheus.yml') as {
        scrape_configs: {
          metrics_path?: string;
          static_configs?: { targets: string[]; labels?: Record<string, string> }[];
        }[];
      }[];
      const target = `${service}:${metricsPort(service, env())}`;
      const jobs = config!.scrape_configs.filter((job) =>
        job.static_configs?.some((c) => c.targets.includes(target)),
      );
      expect(jobs.map((job) => job.metrics_path ?? '/metrics')).toEqual(['/metrics']);
      const labels = jobs[0]?.static_configs?.find((c) => c.targets.includes(target))?.labels;
      expect(labels?.service).toBe(service);
    });
  });
});
