/**
 * Every manifest in deploy/k8s against the Kubernetes API schemas (kubernetes-models, the
 * OpenAPI schemas of Kubernetes 1.27 compiled into the package: no network at test time).
 * The schemas check types, required fields and enums; they do not refuse unknown fields.
 */
import { k8sObjects, type K8sObject } from './load';
import { schemaProblems as problems } from './schema';

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
