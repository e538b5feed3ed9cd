import { ROOT_CONTEXT } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { PackSpanProcessor, redactAttributes } from './processor';
import { inService } from './scope';

describe('span redaction ("span attributes and events go through the same redaction as logs")', () => {
  it('replaces secret-named attributes, cuts Authorization-like text and drops query strings of URLs', () => {
    const attributes: Record<string, unknown> = {
      'gen_ai.request.model': 'gpt-4o-mini',
      api_key: 'sk-live-123456',
      'http.request.header.authorization': 'Token abcdefgh',
      'pack.webhook.secret': 'whsec_abcdefghijk',
      'url.full': 'https://provider.example/v1/models?key=AIzaSecret123&alt=json',
      'exception.message': 'refused: Bearer abcdefghijklmnop',
      'pack.note': ['Basic dXNlcjpwYXNzd29yZA==', 'fine'],
      'pack.count': 3,
    };
    redactAttributes(attributes);
    expect(attributes).toEqual({
      'gen_ai.request.model': 'gpt-4o-mini',
      api_key: '[REDACTED]',
      'http.request.header.authorization': '[REDACTED]',
      'pack.webhook.secret': '[REDACTED]',
      'url.full': 'https://provider.example/v1/models?[REDACTED]',
      'exception.message': 'refused: Bearer [REDACTED]',
      'pack.note': ['Basic [REDACTED]', 'fine'],
      'pack.count': 3,
    });
  });

  it('redacts every exported span and its events, and names the service the span was made in', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new PackSpanProcessor('test-process'), new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer('spec');
    inService('llm-gateway', () => {
      const span = tracer.startSpan('chat', { attributes: { api_key: 'sk-123456789' } }, ROOT_CONTEXT);
      span.addEvent('gen_ai.content', { 'gen_ai.prompt': 'use Token abcdefghij', password: 'hunter22' });
      span.end();
    });
    tracer.startSpan('outside').end();
    await provider.forceFlush();
    const [inside, outside] = exporter.getFinishedSpans();
    expect(inside!.attributes).toEqual({ api_key: '[REDACTED]' });
    expect(inside!.events[0]!.attributes).toEqual({
      'gen_ai.prompt': 'use Token [REDACTED]',
      password: '[REDACTED]',
    });
    expect(inside!.resource.attributes['service.name']).toBe('llm-gateway');
    expect(outside!.resource.attributes['service.name']).not.toBe('llm-gateway');
  });
});
