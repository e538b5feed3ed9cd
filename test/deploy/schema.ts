/** Kubernetes objects against the API schemas of kubernetes-models (offline). */
import type { K8sObject } from './load';

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

export function schemaProblems(object: K8sObject): string[] {
  try {
    new (modelFor(object))(object).validate();
    return [];
  } catch (error) {
    return [`${object.kind}/${object.metadata.name}: ${(error as Error).message}`];
  }
}
