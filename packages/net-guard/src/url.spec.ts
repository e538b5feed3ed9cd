import { parseAllowedCidrs } from './address';
import { validateTargetUrl } from './url';

function reason(url: string, allowed?: ReturnType<typeof parseAllowedCidrs>): string {
  const check = validateTargetUrl(url, allowed ? { allowed } : {});
  return check.ok ? '(accepted)' : check.reason;
}

describe('validateTargetUrl', () => {
  it('accepts http and https URLs with a host', () => {
    expect(validateTargetUrl('https://api.openai.com/v1').ok).toBe(true);
    expect(validateTargetUrl('http://llm.internal.example:8443/path?q=1').ok).toBe(true);
    expect(validateTargetUrl('https://[2606:4700:4700::1111]/').ok).toBe(true);
  });

  it('names what is wrong', () => {
    expect(reason('not a url')).toBe('must be an absolute http:// or https:// URL');
    expect(reason('/v1/chat')).toBe('must be an absolute http:// or https:// URL');
    expect(reason('ftp://example.com/')).toBe('must use http or https, not ftp');
    expect(reason('file:///etc/passwd')).toBe('must use http or https, not file');
    expect(reason('https://example.com:0/')).toBe('port 0 is not a port a server listens on');
    expect(reason('https://example.com:65536/')).toBe('must be an absolute http:// or https:// URL');
  });

  it('refuses credentials in the URL without repeating them', () => {
    for (const url of [
      'https://user:s3cret@example.com/',
      'https://s3cret@example.com/',
      'https://:s3cret@example.com/',
    ]) {
      const text = reason(url);
      expect(text).toContain('must not contain credentials');
      expect(text).not.toContain('s3cret');
    }
  });

  it('with allowed ranges, refuses an IP-literal host at once, in any spelling', () => {
    const none = parseAllowedCidrs('');
    expect(reason('http://127.0.0.1:8080/', none)).toContain('127.0.0.1 is a loopback address');
    expect(reason('http://0x7f.1/', none)).toContain('127.0.0.1 is a loopback address');
    expect(reason('http://[::ffff:169.254.169.254]/', none)).toContain('cloud metadata');
    expect(reason('http://[fd00:ec2::254]/', none)).toContain('cloud metadata');
    expect(reason('http://127.0.0.1:8080/', parseAllowedCidrs('127.0.0.0/8'))).toBe('(accepted)');
    expect(reason('http://8.8.8.8/', none)).toBe('(accepted)');
  });
});
