/**
 * Every manifest in deploy/k8s against the Kubernetes API schemas (kubernetes-models, the
 * OpenAPI schemas of Kubernetes 1.27 compiled into the package: no network at test time).
 * The schemas check types, required fields and enums; they do not refuse unknown fields.
 */
import { k8sObjects, type K8sObject } from './load';

interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

/** `apps/v1` + `Deployment` -> the model class of kubernetes-models/apps/v1/Deployment. */
function modelFor(object: K8sObject): ModelClass {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module is chosen by the manifest
  const module = require(`kubernetes-models/${object.apiVersion}/${object.kind}`) as Record<
    string,
    ModelClass
  >;
  const model = module[object.kind];
  if (!model) throw new Error(`kubernetes-models has no ${object.apiVersion} ${object.kind}`);
  return model;
}

function problems(object: K8sObject): string[] {
  try {
    new (modelFor(object))(object).validate();
    return [];
  } catch (error) {
    return [`${object.kind}/${object.metadata.name}: ${(error as Error).message}`];
  }
}

describe('deploy/k8s against the Kubernetes API schemas', () => {
  const { all } = k8sObjects();

  it('has only objects the Kubernetes API accepts', () => {
    expect(all.length).toBeGreaterThan(10);
    expect(all.flatMap(problems)).toEqual([]);
  });

  it('would catch a wrong type or a missing required field', () => {
    const deployment = all.find((object) => object.kind === 'Deployment')!;
    const broken = JSON.parse(JSON.stringify(deployment)) as K8sObject & {
      spec: { replicas: unknown; template: { spec: { containers: object[] } } };
    };
    broken.spec.replicas = 'two';
    expect(problems(broken).join()).toContain('replicas must be integer');
    const nameless = JSON.parse(JSON.stringify(deployment)) as typeof broken;
    delete (nameless.spec.template.spec.containers[0] as { name?: string }).name;
    expect(problems(nameless).join()).toContain('containers/0 must have required property name');
  });
});
