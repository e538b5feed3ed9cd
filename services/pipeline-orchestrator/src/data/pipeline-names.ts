import type { Connection } from 'mongoose';
import { oneBatch } from '@pack/db';
import type { StageNames } from '../domain/pipelines/pipeline-reads';
import type { PipelineNameStore } from '../domain/pipelines/store';
import { MODELS_COLLECTION, SERVICES_COLLECTION } from './directory-repository';
import { PROCESSORS_COLLECTION } from './processor-repository';

/**
 * Names for pipeline views from the orchestrator's own processors (deleted ones included: a
 * stage names the processor that ran it) and its projections of models and Services: one query
 * per collection for a whole page, by `_id`.
 */
export class PipelineNameRepository implements PipelineNameStore {
  constructor(private readonly connection: Connection) {}

  async stages(processorIds: readonly number[]): Promise<Map<number, StageNames>> {
    const names = new Map<number, StageNames>();
    if (processorIds.length === 0) return names;
    const processors = await this.connection
      .collection<{ _id: number; name: string; llm_model_id: number }>(PROCESSORS_COLLECTION)
      .find(
        { _id: { $in: [...processorIds] } },
        { projection: { name: 1, llm_model_id: 1 }, ...oneBatch(processorIds.length) },
      )
      .toArray();
    const modelIds = [...new Set(processors.map((processor) => processor.llm_model_id))];
    const models = await this.connection
      .collection<{ _id: number; model_name: string }>(MODELS_COLLECTION)
      .find({ _id: { $in: modelIds } }, { projection: { model_name: 1 }, ...oneBatch(modelIds.length) })
      .toArray();
    const modelNames = new Map(models.map((model) => [model._id, model.model_name]));
    for (const processor of processors)
      names.set(processor._id, {
        processor_name: processor.name,
        model_name: modelNames.get(processor.llm_model_id) ?? null,
      });
    return names;
  }

  async models(modelIds: readonly number[]): Promise<Map<number, string>> {
    const models = await this.connection
      .collection<{ _id: number; model_name: string }>(MODELS_COLLECTION)
      .find(
        { _id: { $in: [...new Set(modelIds)] } },
        { projection: { model_name: 1 }, ...oneBatch(modelIds.length) },
      )
      .toArray();
    return new Map(models.map((model) => [model._id, model.model_name]));
  }

  async services(serviceIds: readonly number[]): Promise<Map<number, string>> {
    if (serviceIds.length === 0) return new Map();
    const services = await this.connection
      .collection<{ _id: number; name: string }>(SERVICES_COLLECTION)
      // One id by equality: FerretDB v1 pushes `_id` equality down but scans for `$in`.
      .find(
        { _id: serviceIds.length === 1 ? serviceIds[0]! : { $in: [...serviceIds] } },
        { projection: { name: 1 }, ...oneBatch(serviceIds.length) },
      )
      .toArray();
    return new Map(services.map((service) => [service._id, service.name]));
  }
}
