import type { Context } from '@opentelemetry/api';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { isSecretFieldName } from '@pack/contracts';
import { REDACTED, redactText } from '@pack/logging';
import { currentService } from './scope';

type Attributes = Record<string, unknown>;

/** Attributes whose value is a URL: the query string may carry a key (`?key=...`), so it goes. */
const URL_ATTRIBUTE = /(^|\.)(url|url\.full|http\.url|http\.target|url\.query)$/;

/**
 * The same redaction as every log line (packages/logging redact.ts), for span attributes and
 * event attributes: a secret-named attribute (its last dotted segment, `gen_ai.api_key`) becomes
 * [REDACTED], an Authorization-like value in free text is cut, a URL keeps no query string.
 */
export function redactAttributes(attributes: Attributes): void {
  for (const [key, value] of Object.entries(attributes)) {
    const last = key.slice(key.lastIndexOf('.') + 1);
    if (isSecretFieldName(last) || isSecretFieldName(key)) attributes[key] = REDACTED;
    else if (typeof value === 'string') {
      const text = URL_ATTRIBUTE.test(key) ? value.replace(/\?.*$/s, '?[REDACTED]') : value;
      const clean = redactText(text);
      if (clean !== value) attributes[key] = clean;
    } else if (Array.isArray(value))
      attributes[key] = (value as unknown[]).map((item) =>
        typeof item === 'string' ? redactText(item) : item,
      );
  }
}

/**
 * First of the SDK's span processors: at start, a span made inside a service's scope (more than
 * one service in the process) gets that service's resource; at end, before any exporter sees it,
 * its attributes and its events' attributes are redacted (redactAttributes).
 */
export class PackSpanProcessor implements SpanProcessor {
  private readonly resources = new Map<string, Resource>();

  constructor(private readonly processService: string) {}

  onStart(span: Span, _parent: Context): void {
    const service = currentService();
    if (!service || service === this.processService) return;
    let resource = this.resources.get(service);
    if (!resource) {
      resource = span.resource.merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }));
      this.resources.set(service, resource);
    }
    (span as { resource: Resource }).resource = resource;
  }

  onEnd(span: ReadableSpan): void {
    redactAttributes(span.attributes);
    for (const event of span.events) if (event.attributes) redactAttributes(event.attributes);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
